import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import request from 'supertest';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app';
import { parseMetrics } from '../helpers/prometheus';

const RULES = 'deploy/prometheus/alerts.yml';
const DASHBOARD = 'deploy/grafana/dashboards/community-api.json';
const OWN = /\b((?:http_server|db|job_queue|webhook|outbox|graphql|rate_limit|nodejs|process)_[a-z0-9_]+)\b/g;

interface Rule {
  alert: string;
  expr: string;
  labels?: { severity?: string };
  annotations?: { summary?: string };
}

/** Every expression of the alert rules and of the dashboard's panels. */
function expressions(): { where: string; expr: string }[] {
  const rules = (parse(fs.readFileSync(RULES, 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap((g) => g.rules);
  const dashboard = JSON.parse(fs.readFileSync(DASHBOARD, 'utf8')) as { panels: { title: string; targets?: { expr: string }[] }[] };
  return [
    ...rules.map((r) => ({ where: `alert ${r.alert}`, expr: r.expr })),
    ...dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ where: `panel ${p.title}`, expr: t.expr }))),
  ];
}

describe('deploy/: alert rules and dashboard', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it('every metric an alert or a panel reads is one the service exposes, with the labels it uses', async () => {
    const families = parseMetrics((await request(app.runtime.app).get('/metrics')).text);
    // Series that only appear once a request was observed.
    const exposed = new Set([...families.keys(), 'http_server_requests_total', 'http_server_request_duration_seconds_bucket', 'http_server_request_duration_seconds_count', 'http_server_request_duration_seconds_sum']);
    const exprs = expressions();
    expect(exprs.length).toBeGreaterThan(20);
    for (const { where, expr } of exprs) {
      const names = [...expr.matchAll(OWN)].map((m) => m[1]);
      // `up` is Prometheus's own series for each scrape.
      if (!/^up\{/.test(expr)) expect(names.length, `${where}: ${expr}`).toBeGreaterThan(0);
      for (const name of names) expect(exposed.has(name), `${where} reads ${name}`).toBe(true);
      // Label matchers name only labels the service sets (or Prometheus adds).
      for (const [, label] of expr.matchAll(/[{,]\s*([a-z_]+)\s*(?:=~|!=|=)/g)) {
        expect(['method', 'route', 'status_code', 'status_class', 'api', 'operation_type', 'pool', 'state', 'reason', 'task', 'outcome', 'instance', 'job', 'le'], `${where}: ${label}`).toContain(label);
      }
    }
    const rules = (parse(fs.readFileSync(RULES, 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap((g) => g.rules);
    for (const topic of ['ErrorRate', 'Latency', 'JobQueueAge', 'WebhookDeliveryFailures', 'OutboxLag']) {
      expect(rules.some((r) => r.alert.includes(topic)), topic).toBe(true);
    }
    for (const r of rules) {
      expect(['critical', 'warning', 'info'], r.alert).toContain(r.labels?.severity);
      expect(r.annotations?.summary, r.alert).toBeTruthy();
    }
  });

  // promtool (Debian's `prometheus` package) checks the rules as Prometheus will load them.
  const promtool = spawnSync('promtool', ['--version']).status === 0;
  it.runIf(promtool)('promtool check rules accepts the alert rules', () => {
    const res = spawnSync('promtool', ['check', 'rules', RULES], { encoding: 'utf8' });
    expect(res.status, `${res.stdout}${res.stderr}`).toBe(0);
    expect(res.stdout).toMatch(/SUCCESS: \d+ rules found/);
  });
  it.runIf(promtool)('promtool check config accepts the Prometheus configuration', () => {
    const dir = fs.mkdtempSync('.data/promtool-');
    try {
      // The compose file mounts alerts.yml at /etc/prometheus; here it sits beside the config.
      fs.writeFileSync(`${dir}/prometheus.yml`, fs.readFileSync('deploy/prometheus/prometheus.yml', 'utf8').replace('/etc/prometheus/alerts.yml', 'alerts.yml'));
      fs.copyFileSync(RULES, `${dir}/alerts.yml`);
      const res = spawnSync('promtool', ['check', 'config', `${dir}/prometheus.yml`], { encoding: 'utf8' });
      expect(res.status, `${res.stdout}${res.stderr}`).toBe(0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
