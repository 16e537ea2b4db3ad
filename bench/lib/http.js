/** HTTP measurements: sequential request latency (undici) and bounded load (autocannon). */
import autocannon from 'autocannon';
import { Client } from 'undici';
import { percentile } from './stats.js';

/**
 * Sends `path` sequentially over one keep-alive connection: `warmup` unmeasured, then `n`
 * measured (request start → last body byte). Returns { p50, p95, rows, status }; throws with the
 * body's start when the answer is not 2xx.
 */
export async function sequentialLatency(origin, path, { n = 100, warmup = 10, headers = {} } = {}) {
  const client = new Client(origin, { keepAliveTimeout: 30_000 });
  const times = [];
  let last = '';
  try {
    for (let i = 0; i < warmup + n; i++) {
      const t = process.hrtime.bigint();
      const res = await client.request({ method: 'GET', path, headers });
      const body = await res.body.text();
      const ms = Number(process.hrtime.bigint() - t) / 1e6;
      if (res.statusCode >= 300) throw new Error(`HTTP ${res.statusCode}: ${body.slice(0, 120)}`);
      if (i >= warmup) times.push(ms);
      last = body;
    }
  } finally {
    await client.close();
  }
  let rows = null;
  try {
    const parsed = JSON.parse(last);
    rows = Array.isArray(parsed) ? parsed.length : 1;
  } catch {
    // not JSON: leave rows unknown
  }
  return { p50: percentile(times, 50), p95: percentile(times, 95), rows };
}

/**
 * Bounded loopback load with autocannon: `connections` keep-alive connections for `seconds`.
 * Returns { rps (mean req/s), p50, p99, non2xx, errors }; throws when most answers failed.
 */
export async function load(url, { connections = 10, seconds = 10, expectRows = 50 } = {}) {
  // One checked request first: a fast wrong answer must not count as throughput.
  const probe = await fetch(url);
  const text = await probe.text();
  if (!probe.ok) throw new Error(`HTTP ${probe.status}: ${text.slice(0, 120)}`);
  let rows = -1;
  try {
    const parsed = JSON.parse(text);
    rows = Array.isArray(parsed) ? parsed.length : -1;
  } catch {
    // not JSON
  }
  if (expectRows !== null && rows !== expectRows) throw new Error(`the page answered ${rows < 0 ? 'no JSON array' : `${rows} rows`}, expected ${expectRows}`);
  const result = await autocannon({ url, connections, duration: seconds, pipelining: 1 });
  const ok = result.requests.total - result.non2xx;
  if (result.requests.total === 0 || ok < result.requests.total / 2) {
    throw new Error(`${result.non2xx} of ${result.requests.total} answers were not 2xx, ${result.errors} errors`);
  }
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}
