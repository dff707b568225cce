import { describe, expect, it } from 'vitest';
import { DriverException } from '@mikro-orm/core';
import { capture } from '../helpers/log';

describe('what an error log line keeps', () => {
  it("a failed statement's values do not reach the log, its shape does (knex puts the statement, values inlined, in the message)", () => {
    const { logger, lines } = capture();
    const pg = Object.assign(new Error(`insert into members (email_address) values ('ada@example.org') - duplicate key value violates unique constraint "members_community_email_unique"`), {
      code: '23505',
      detail: 'Key (community_id, lower(email_address))=(01a2, ada@example.org) already exists.',
    });
    logger.error({ err: new DriverException(pg) }, 'operation failed');
    logger.warn({ err: `update members set first_name = 'Ada' where id = 'x'` }, 'message only');
    const text = JSON.stringify(lines);
    expect(text).not.toContain('ada@example.org');
    expect(text).not.toContain('Ada');
    expect(lines[0].err.message).toBe(`insert into members (email_address) values ('…') - duplicate key value violates unique constraint "members_community_email_unique"`);
    expect(lines[0].err.detail).toBe('Key (community_id, lower(email_address))=(…) already exists.');
    expect(lines[0].err.code).toBe('23505');
    expect(lines[0].err.stack).toMatch(/^DriverException: insert into members/);
    expect(lines[1].err).toBe(`update members set first_name = '…' where id = '…'`);
  });

  it('keys stay redacted and other values pass as they are', () => {
    const { logger, lines } = capture();
    logger.info({ caller: { apiKey: 'cm_secret' }, n: 5, err: 7 }, 'x');
    expect(lines[0]).toMatchObject({ caller: { apiKey: '[redacted]' }, n: 5, err: 7 });
  });
});
