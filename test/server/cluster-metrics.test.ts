import { describe, expect, it } from 'vitest';
import { mergeSnapshots, type MetricsSnapshot, renderMetrics } from '../../src/server/admin.js';
import { poolShares } from '../../src/server/cluster.js';
import { processFigures } from '../../src/server/process-metrics.js';

/** One worker's figures: `n` GETs answered 200, a pool of `max` with `open` connections. */
function worker(n: number, max: number, open: number): MetricsSnapshot {
  return {
    requests: { 'method="GET",status="200"': n },
    buckets: Array(11).fill(n),
    count: n,
    sum: n / 100,
    schemaLoads: { success: 1, fail: 0 },
    pool: { total: open, idle: 0, waiting: 0, max },
    process: processFigures(),
    workers: 1,
  };
}

// Issue 38 item 2: the primary adds its workers' figures up.
describe('the figures of several workers as one', () => {
  it('shares --db-pool out among the workers, never more than it in all', () => {
    expect(poolShares(10, 3)).toEqual([4, 3, 3]);
    expect(poolShares(4, 2)).toEqual([2, 2]);
    expect(poolShares(2, 2)).toEqual([1, 1]);
  });

  it('adds counters, histogram and pool figures; the start time is the earliest', () => {
    const [a, b] = [worker(9, 5, 3), worker(8, 5, 2)];
    b.process.startTimeSeconds = a.process.startTimeSeconds - 10;
    const m = mergeSnapshots([a, b]);
    expect(m.requests).toEqual({ 'method="GET",status="200"': 17 });
    expect([m.count, m.buckets[0], m.workers]).toEqual([17, 17, 2]);
    expect(m.pool).toEqual({ total: 5, idle: 0, waiting: 0, max: 10 });
    expect(m.process.startTimeSeconds).toBe(b.process.startTimeSeconds);
    expect(m.process.residentBytes).toBe(a.process.residentBytes + b.process.residentBytes);
    const text = renderMetrics(m);
    expect(text).toContain('catalog_http_requests_total{method="GET",status="200"} 17');
    expect(text).toContain('pgrst_db_pool_max 10');
    expect(text).toContain('catalog_workers 2');
    expect(text).toMatch(/^process_cpu_seconds_total \d/m);
    expect(text).toMatch(/^process_resident_memory_bytes \d+$/m);
  });
});
