import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';

/**
 * `npm run start:prod` and the Dockerfile run node with package.json `config.nodeFlags`
 * (docs/configuration.md). Some are V8's own flags (`--no-allocation-site-pretenuring`), which
 * a later Node may drop or rename: node then refuses to start ("bad option"). This fails first.
 */
const flags: string[] = JSON.parse(fs.readFileSync('package.json', 'utf8')).config.nodeFlags.split(' ').filter(Boolean);

describe('the production node flags', () => {
  it('are accepted by this Node, and reach V8', () => {
    const run = spawnSync(
      process.execPath,
      [...flags, '-e', 'const v8 = require("node:v8"); process.stdout.write(String(v8.getHeapSpaceStatistics().length > 0))'],
      { encoding: 'utf8' },
    );
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toBe('true');
  });

  it('cap the old space as configured', () => {
    const cap = Number(flags.find((f) => f.startsWith('--max-old-space-size='))?.split('=')[1]);
    expect(cap).toBeGreaterThan(0);
    const run = spawnSync(process.execPath, [...flags, '-e', 'process.stdout.write(String(require("node:v8").getHeapStatistics().heap_size_limit))'], { encoding: 'utf8' });
    expect(run.status).toBe(0);
    // The limit covers the old space and the young generation's semi-spaces.
    const limitMb = Number(run.stdout) / 2 ** 20;
    expect(limitMb).toBeGreaterThanOrEqual(cap);
    expect(limitMb).toBeLessThan(cap + 64);
  });
});
