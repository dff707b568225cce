import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileQuery, isCompiledQuery } from 'graphql-jit';
import { printedSchema } from '../../src/graphql/schema';
import { compileRoutes } from '../../src/rest/compile';
import { routes } from '../../src/rest/routes';
import { buildSchema } from '../../src/graphql/schema';

describe('GraphQL schema', () => {
  it('schema/schema.graphql is the printed SDL of the code (run `npm run schema:print`)', () => {
    const committed = fs.readFileSync(path.resolve(__dirname, '../../schema/schema.graphql'), 'utf8');
    expect(committed).toBe(printedSchema());
  });

  it('every facade document parses and validates against the schema', () => {
    const compiled = compileRoutes(buildSchema(), routes);
    expect(compiled.length).toBe(routes.length);
    for (const route of compiled) expect(route.parsed.definitions.length).toBeGreaterThan(0);
  });

  it('graphql-jit compiles every facade document (none falls back to the generic executor)', () => {
    const schema = buildSchema();
    const failed = compileRoutes(schema, routes)
      .filter((route) => !isCompiledQuery(compileQuery(schema, route.parsed)))
      .map((route) => route.operationId);
    expect(failed).toEqual([]);
  });

  it('a document that does not validate stops the boot', () => {
    expect(() =>
      compileRoutes(buildSchema(), [
        { ...routes[0], operationId: 'broken', document: 'query broken { groups { nope } }' },
      ]),
    ).toThrow(/broken/);
  });
});
