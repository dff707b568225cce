import { createRequire } from 'node:module';

/** pg's own text form of a parameter (what it sends for `$n`), for the literals of EXECUTE. */
const { prepareValue } = createRequire(__filename)('pg/lib/utils') as { prepareValue(value: unknown): string | Buffer | null };

/**
 * A statement captured from MikroORM's knex `query` event (`?` placeholders, or `$n` from the
 * service's prepared statements, and its bindings) as a PREPARE and an EXECUTE with literal
 * arguments (and its text with `$n`), to plan it elsewhere as the service ran it (bench/scale.ts, test/platform/index-plans.test.ts).
 */
export function preparedText(name: string, sql: string, bindings: unknown[], escapeLiteral: (text: string) => string): { text: string; prepare: string; execute: string } {
  let k = 0;
  const text = /\$1\b/.test(sql) ? sql : sql.replace(/\?/g, () => `$${++k}`);
  const args = bindings.map((v) => {
    const x = prepareValue(v);
    return x === null || x === undefined ? 'null' : escapeLiteral(String(x));
  });
  return { text, prepare: `prepare ${name} as ${text}`, execute: `execute ${name}${args.length ? `(${args.join(', ')})` : ''}` };
}
