import { expect } from 'vitest';

type Res = { status: number; headers: Record<string, string>; body: any };
export type ProblemBody = { detail: string; errors: { pointer: string; detail: string }[] };

/** Asserts an RFC 9457 problem with `status`, every `pointers` entry among its errors; returns the body. */
export function expectProblem(res: Res, status: number, ...pointers: (string | undefined)[]): ProblemBody {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ status, title: expect.any(String), type: expect.any(String), detail: expect.any(String) });
  for (const e of res.body.errors ?? []) expect(e).toEqual({ pointer: expect.any(String), detail: expect.any(String) });
  const got = (res.body.errors ?? []).map((e: { pointer: string }) => e.pointer);
  for (const pointer of pointers) if (pointer) expect(got).toContain(pointer);
  return res.body;
}
