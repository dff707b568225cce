import { DriverException, ForeignKeyConstraintViolationException } from '@mikro-orm/core';
import { GraphQLError } from 'graphql';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors/app-error';
import { BusyError, classify, KINDS } from '../../src/errors/classify';

/** The one error classification (src/errors/classify.ts): pure, so pinned here without a server. */
const pg = (code: string, extra: Record<string, string> = {}) => Object.assign(new Error('database said no'), { code, ...extra });

describe('classify', () => {
  it('an AppError keeps its code, message and issues, however deeply wrapped', () => {
    const app = new AppError('CONFLICT', 'taken', [{ path: ['input', 'externalId'], detail: 'taken' }]);
    const wrapped = new GraphQLError('wrapped', { originalError: app });
    expect(classify(wrapped)).toEqual({ code: 'CONFLICT', status: 409, detail: 'taken', issues: app.issues });
  });

  it('an AppError a statement failed with and MikroORM converted (its DriverException copies own properties) keeps its code and issues', () => {
    const app = new AppError('CONFLICT', 'This Idempotency-Key already has its answer', [{ path: ['x'], detail: 'taken' }]);
    expect(classify(new DriverException(app))).toEqual({ code: 'CONFLICT', status: 409, detail: app.message, issues: app.issues });
    // A real SQLSTATE is not one of ours: a driver error with an unknown code stays INTERNAL.
    expect(classify(new DriverException(pg('XX000'))).code).toBe('INTERNAL');
  });

  it.each([
    ['23503', 'CONFLICT', 409],
    ['23505', 'CONFLICT', 409],
    ['23514', 'VALIDATION', 400],
    ['23502', 'VALIDATION', 400],
    ['22P02', 'VALIDATION', 400],
    ['22P05', 'VALIDATION', 400],
    ['22001', 'VALIDATION', 400],
  ])('database refusal %s is %s (%i), naming the column when it can', (code, expected, status) => {
    const c = classify(pg(code, { column: 'member_id' }));
    expect(c).toMatchObject({ code: expected, status });
    expect(c.issues).toEqual([{ path: ['memberId'], detail: c.detail }]);
    expect(c.detail).not.toMatch(/database said no|member_id/);
  });

  it('the column of a foreign key error comes from its detail when PostgreSQL names no column', () => {
    const err = new ForeignKeyConstraintViolationException(pg('23503', { detail: 'Key (member_id)=(x) is not present in table "members".' }));
    expect(classify(err).issues[0].path).toEqual(['memberId']);
  });

  it.each([
    ['statement timeout', pg('57014')],
    ['lock timeout', pg('55P03')],
    ['deadlock', pg('40P01')],
    ['connection refused', pg('ECONNREFUSED')],
    ['pool exhausted', Object.assign(new Error('Knex: Timeout acquiring a connection. The pool is probably full.'), { name: 'KnexTimeoutError' })],
    ['busy caller', new BusyError('This API key has too many database operations in progress')],
  ])('%s is UNAVAILABLE: 503 with Retry-After', (_name, err) => {
    expect(classify(err)).toMatchObject({ code: 'UNAVAILABLE', status: 503, retryAfter: 1 });
  });

  it('body-parser errors keep their meaning', () => {
    expect(classify(Object.assign(new Error('x'), { type: 'entity.too.large', status: 413 })).status).toBe(413);
    expect(classify(Object.assign(new Error('x'), { type: 'entity.parse.failed', status: 400 })).status).toBe(400);
    expect(classify(Object.assign(new Error('x'), { type: 'charset.unsupported', status: 415 })).status).toBe(415);
  });

  it('anything else is INTERNAL and says nothing of itself', () => {
    expect(classify(new TypeError('x is undefined at foo.ts:3'))).toEqual({
      code: 'INTERNAL',
      status: 500,
      detail: 'An unexpected error occurred',
      issues: [],
    });
  });

  it('every code has one distinct status in the table', () => {
    const statuses = Object.values(KINDS).map((k) => k.status);
    expect(new Set(statuses).size).toBe(statuses.length);
  });
});
