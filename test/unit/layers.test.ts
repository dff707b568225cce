import madge from 'madge';
import { describe, expect, it } from 'vitest';

/**
 * The import graph of src/ as madge reads it (type-only imports included: a cycle through
 * types is still a cycle a reader has to untangle), built once for the checks below.
 */
const graph = madge('src', { fileExtensions: ['ts'], tsConfig: 'tsconfig.json' });

/** Files outside src/modules/ that import a feature's files, and why (docs/architecture.md, "Exceptions"). */
const FEATURE_IMPORTS_OUTSIDE_MODULES: Record<string, string[]> = {
  // The operator CLI runs the communities module's service, and re-encrypts webhook secrets, without a server.
  'admin/cli.ts': ['modules/communities/admin.service.ts', 'modules/webhooks/webhook-secrets.ts'],
  // The OpenAPI document lists every event type as a webhook.
  'openapi/webhooks.ts': ['modules/events/event-types.ts'],
};

describe('the import graph of src/', () => {
  it('has no cycle', async () => {
    expect((await graph).circular()).toEqual([]);
  });

  // Feature modules do import src/rest/route.ts: each declares its own REST route entries.
  it('the GraphQL core and the layers under it never import the REST facade', async () => {
    const deps = (await graph).obj();
    const backwards = Object.entries(deps).flatMap(([file, imports]) =>
      /^(graphql|db|common|errors|auth|jobs|http)\//.test(file) ? imports.filter((i) => i.startsWith('rest/')).map((i) => `${file} -> ${i}`) : [],
    );
    expect(backwards).toEqual([]);
  });

  it('outside src/modules/, only the module list and the listed exceptions import a feature', async () => {
    const deps = (await graph).obj();
    const found: Record<string, string[]> = {};
    for (const [file, imports] of Object.entries(deps)) {
      if (file.startsWith('modules/') || file.startsWith('db/migrations/')) continue;
      const features = imports.filter((i) => /^modules\/[^/]+\//.test(i));
      if (features.length) found[file] = features;
    }
    expect(found).toEqual(FEATURE_IMPORTS_OUTSIDE_MODULES);
  });
});
