import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
// @ts-expect-error: the package ships no types (it returns prom2json's shape, typed below)
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { PATIENCE_MS } from '../support/patience.js';

/** Whether this machine shows sockets and processes under /proc (Linux): the listening-port checks need it. */
export const HAS_PROC = existsSync('/proc/self/fd') && existsSync('/proc/net/tcp');

/**
 * The TCP ports the processes listen on (IPv4 and IPv6), read from /proc: each process's socket
 * inodes, matched against the kernel's table of listening sockets.
 */
export function listeningPorts(pids: number[]): number[] {
  const inodes = new Set<string>();
  for (const pid of pids) {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (m) inodes.add(m[1]);
      } catch {
        // closed meanwhile
      }
    }
  }
  const ports = new Set<number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    if (!existsSync(table)) continue;
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      // local_address is f[1] (hex ip:port), st is f[3] (0A: LISTEN), inode is f[9]
      if (f[3] === '0A' && inodes.has(f[9])) ports.add(parseInt(f[1].split(':')[1], 16));
    }
  }
  return [...ports].sort((a, b) => a - b);
}

/** The process and its children (a --workers primary's workers). */
export function withChildren(pid: number): number[] {
  let children: number[] = [];
  try {
    children = execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' }).trim().split('\n').filter(Boolean).map(Number);
  } catch {
    // none
  }
  return [pid, ...children];
}

/** Waits (at most 15 s) until `text()` matches; returns whether it did. */
export async function until(check: () => boolean, ms = PATIENCE_MS): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end && !check(); ) await new Promise((r) => setTimeout(r, 50));
  return check();
}

/** Waits until `text()` has `times` matches of `pattern` (global), failing the test with the text when it does not. */
export async function waitForLines(text: () => string, pattern: RegExp, times = 1): Promise<void> {
  const count = () => (text().match(new RegExp(pattern.source, `${pattern.flags.replace('g', '')}g`)) ?? []).length;
  if (!(await until(() => count() >= times))) throw new Error(`waited for ${times}× ${pattern} on stderr; it has:\n${text()}`);
}

/** One family of a scrape, as prom2json gives it. */
interface Family {
  name: string;
  type: string;
  metrics: Array<{ value?: string; labels?: Record<string, string>; buckets?: Record<string, string>; count?: string; sum?: string }>;
}

/** Scrapes `/metrics` and parses it with a Prometheus text-format parser: name → family. */
export async function scrape(adminUrl: string): Promise<Map<string, Family>> {
  const res = await fetch(`${adminUrl}/metrics`);
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}`);
  const families = parsePrometheusTextFormat(await res.text()) as Family[];
  return new Map(families.map((f) => [f.name, f]));
}

/** The sum of a family's samples (0 when it is absent). */
export function total(families: Map<string, Family>, name: string): number {
  return (families.get(name)?.metrics ?? []).reduce((n, m) => n + Number(m.value ?? m.count ?? 0), 0);
}
