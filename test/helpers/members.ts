import { expect } from 'vitest';
import type { TestApp, Tenant } from './app';

/** Shared by the members and additional-fields test files (all through HTTP). */
export const auth = (tenant: Tenant) => ({ 'X-API-Key': tenant.key });
export const TS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
export const NO_ID = '00000000-0000-4000-8000-000000000000';
export const MEMBERS = '/api/v1/members';
export const FIELDS = '/api/v1/additional_fields';

export { expectProblem, type ProblemBody } from './problem';
import type { ProblemBody } from './problem';

export const pointers = (body: ProblemBody) => body.errors.map((e) => e.pointer).sort();

export function memberApi(app: TestApp) {
  return {
    async createField(tenant: Tenant, body: Record<string, unknown> = {}): Promise<string> {
      const res = await app.http.post(FIELDS).set(auth(tenant)).send({ name: 'Phone', type: 'TEXT', ...body });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body.id;
    },
    async getField(tenant: Tenant, id: string) {
      return (await app.http.get(`${FIELDS}/${id}`).set(auth(tenant))).body;
    },
    /** name -> orderNumber of every field of the tenant. */
    async orders(tenant: Tenant): Promise<Record<string, number>> {
      const res = await app.http.get(`${FIELDS}?limit=100&sort=orderNumber`).set(auth(tenant));
      return Object.fromEntries(res.body.results.map((f: { name: string; orderNumber: number }) => [f.name, f.orderNumber]));
    },
    async createMember(tenant: Tenant, body: Record<string, unknown>): Promise<{ id: string; externalId: string | null }> {
      const res = await app.http.post(MEMBERS).set(auth(tenant)).send(body);
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body;
    },
    async getMember(tenant: Tenant, id: string, query = '') {
      return (await app.http.get(`${MEMBERS}/${id}${query}`).set(auth(tenant))).body;
    },
    /** Every member of the tenant, counted through the list route. */
    async countMembers(tenant: Tenant): Promise<number> {
      let total = 0;
      for (let skip = 0; ; skip += 100) {
        const res = await app.http.get(`${MEMBERS}?limit=100&skip=${skip}`).set(auth(tenant));
        total += res.body.size;
        if (!res.body._links.next) return total;
      }
    },
  };
}

/** Lets the clock pass a millisecond, so records created one after another never tie on createdAt. */
export const tick = () => new Promise((resolve) => setTimeout(resolve, 2));
