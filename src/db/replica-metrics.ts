import { Counter, Gauge, register } from 'prom-client';

/**
 * The read routing's metrics, in prom-client's default registry (served with every other
 * metric of the process on /metrics). Node names are `primary` and `replica0`, `replica1`, ...
 * in the order of DATABASE_REPLICA_URLS: never a host or a URL.
 */
function once<T>(name: string, make: () => T): T {
  return (register.getSingleMetric(name) as T | undefined) ?? make();
}

export const readsPerNode = once(
  'db_reads_total',
  () => new Counter({ name: 'db_reads_total', help: 'Read-only requests by the database node that served them', labelNames: ['node'] }),
);

export const readFallbacks = once(
  'db_read_fallbacks_total',
  () =>
    new Counter({
      name: 'db_read_fallbacks_total',
      help: 'Reads sent to the primary although replicas are configured, by reason (down, lagging, behind the caller, position unknown, error on the replica)',
      labelNames: ['reason'],
    }),
);

export const replicaLag = once(
  'db_replica_lag_seconds',
  () => new Gauge({ name: 'db_replica_lag_seconds', help: "How long ago the primary wrote the newest WAL the replica has replayed (0: caught up)", labelNames: ['replica'] }),
);

export const replicaUp = once(
  'db_replica_up',
  () => new Gauge({ name: 'db_replica_up', help: '1 while the replica answers its health poll and is within REPLICA_MAX_LAG_MS', labelNames: ['replica'] }),
);
