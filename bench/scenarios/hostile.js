#!/usr/bin/env node
/**
 * Two service figures under writes it should not let hurt anyone else (issue 15 items 4 and 9),
 * each a piece runnable alone against `catalog serve --data` (PGlite, a scratch directory):
 *
 * - `unread`: with --jwt-secret, 8 parallel anonymous 60 MB POSTs (refused before their bodies are
 *   read). Records the service's idle RSS and its peak under the load (target: peak within 100 MB
 *   of idle), and the slowest refusal.
 * - `wait`: one large JSON POST of tracks (default 7.5 MB, just under the embedded default limit;
 *   `--mb 60` passes --max-body to show the old default's cost) while a reader sends `GET /labels?limit=1`
 *   every 250 ms. Records the write's duration and the longest and median wait of those reads.
 *   PGlite runs one statement at a time, so the longest wait is about the write's duration: this
 *   figure says how long a shared embedded service stalls (see `catalog serve --help`).
 *
 * Usage: node bench/scenarios/hostile.js [--only unread|wait] [--mb N]
 */
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCatalog } from '../lib/service.js';

const MB = 1024 * 1024;
const SECRET = 'bench-hostile-secret-long-enough-0123456789';

/** Resident set now and peak so far (VmHWM), in MB. */
function memoryMb(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const mb = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)[1]) / 1024;
  return { rss: mb('VmRSS'), peak: mb('VmHWM') };
}

/**
 * POSTs `size` bytes (one repeated 1 MiB piece, streamed chunked, so this process holds 1 MiB);
 * resolves with the status once the answer has come, which may be before the body was all sent.
 */
function postJunk(url, path, size) {
  const piece = Buffer.alloc(MB, 'x');
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json' } });
    let sent = 0;
    let answered = false;
    req.on('response', (res) => {
      answered = true;
      res.resume();
      res.on('end', () => {
        resolve(res.statusCode);
        req.destroy();
      });
    });
    req.on('error', (err) => (answered ? undefined : reject(err)));
    const pump = () => {
      while (!answered && sent < size) {
        sent += MB;
        if (!req.write(piece)) return void req.once('drain', pump);
      }
      if (!answered) req.end();
    };
    pump();
  });
}

/** Piece `unread`: peak service RSS under 8 parallel anonymous 60 MB POSTs, vs idle. */
export async function unreadBodies({ scratch, posts = 8, mb = 60 }) {
  const service = await startCatalog({ dataDir: join(scratch, 'unread'), env: { CATALOG_JWT_SECRET: SECRET } });
  try {
    for (let i = 0; i < 3; i++) await fetch(`${service.url}/labels?limit=1`);
    const idle = memoryMb(service.pid);
    const t = performance.now();
    const statuses = await Promise.all(Array.from({ length: posts }, () => postJunk(service.url, '/tracks', mb * MB)));
    const ms = performance.now() - t;
    const bad = statuses.filter((s) => s !== 401);
    if (bad.length) throw new Error(`expected every anonymous POST refused with 401, got ${statuses.join(', ')}`);
    const after = memoryMb(service.pid);
    return { idleMb: idle.rss, peakMb: after.peak, growthMb: after.peak - idle.rss, allRefusedMs: ms };
  } finally {
    await service.stop();
  }
}

/** The `wait` piece's default write: about the largest body the embedded service takes by default (8 MiB). */
const WAIT_MB = 7.5;

/** A JSON array of tracks of about `mb` MB. */
function tracksBody(mb) {
  const row = (i) => `{"track_title":"Bench write ${i} ${'x'.repeat(24)}","isrc_code":null}`;
  const parts = [];
  let size = 2;
  for (let i = 0; size < mb * MB; i++) {
    const r = row(i);
    parts.push(r);
    size += r.length + 1;
  }
  return Buffer.from(`[${parts.join(',')}]`);
}

/**
 * A GET on a new connection (no keep-alive: a pooled socket the service's keep-alive timer closed
 * while PGlite held its event loop would fail with ECONNRESET, which is not the wait measured here).
 */
function getFresh(url) {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Piece `wait`: how long readers wait while one large write runs. */
export async function readerWait({ scratch, mb = WAIT_MB, everyMs = 250 }) {
  // over the embedded default limit (8 MiB) the service is told to take it, to show what a larger write costs
  const extraArgs = mb * MB > 8 * MB ? ['--max-body', String(Math.ceil(mb + 1) * MB)] : [];
  const service = await startCatalog({ dataDir: join(scratch, 'wait'), extraArgs });
  try {
    for (let i = 0; i < 3; i++) await fetch(`${service.url}/labels?limit=1`);
    const body = tracksBody(mb);
    const waits = [];
    let writing = true;
    const reader = (async () => {
      while (writing) {
        const t = performance.now();
        const status = await getFresh(`${service.url}/labels?limit=1`);
        if (status !== 200) throw new Error(`GET /labels answered ${status} during the write`);
        waits.push(performance.now() - t);
        await new Promise((res) => setTimeout(res, everyMs));
      }
    })();
    const t = performance.now();
    const w = await fetch(`${service.url}/tracks`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Prefer: 'return=minimal' },
      body,
    });
    await w.arrayBuffer();
    const writeMs = performance.now() - t;
    writing = false;
    await reader;
    if (w.status !== 201) throw new Error(`the ${mb} MB write answered ${w.status}`);
    const sorted = [...waits].sort((a, b) => a - b);
    return { bodyMb: body.length / MB, writeMs, reads: waits.length, maxWaitMs: sorted.at(-1) ?? 0, medianWaitMs: sorted[Math.floor(sorted.length / 2)] ?? 0 };
  } finally {
    await service.stop();
  }
}

/** For bench/run.js (like xlsx.js): records `hostile.unread.*` and `hostile.wait.*`. */
export async function hostile(ctx, { only = ['unread', 'wait'], mb } = {}) {
  if (only.includes('unread')) {
    await ctx.R.attempt('hostile.unread.growth', async () => {
      const r = await unreadBodies({ scratch: ctx.scratch, mb: mb ?? 60 });
      ctx.R.add('hostile.unread.idle', r.idleMb);
      ctx.R.add('hostile.unread.peak', r.peakMb);
      ctx.R.add('hostile.unread.growth', r.growthMb);
    });
  }
  if (only.includes('wait')) {
    await ctx.R.attempt('hostile.wait.max', async () => {
      const r = await readerWait({ scratch: ctx.scratch, mb: mb ?? WAIT_MB });
      ctx.R.add('hostile.wait.write', r.writeMs);
      ctx.R.add('hostile.wait.max', r.maxWaitMs);
      ctx.R.add('hostile.wait.median', r.medianWaitMs);
    });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const arg = (name) => {
    const i = process.argv.indexOf(name);
    return i > 0 ? process.argv[i + 1] : undefined;
  };
  const only = (arg('--only') ?? 'unread,wait').split(',');
  const mb = arg('--mb') === undefined ? undefined : Number(arg('--mb'));
  const scratch = mkdtempSync(join(tmpdir(), 'bench-hostile-'));
  try {
    if (only.includes('unread')) {
      const r = await unreadBodies({ scratch, mb: mb ?? 60 });
      console.log(`unread: 8 anonymous ${mb ?? 60} MB POSTs all 401 in ${(r.allRefusedMs / 1000).toFixed(1)} s; service RSS idle ${r.idleMb.toFixed(0)} MB, peak ${r.peakMb.toFixed(0)} MB (+${r.growthMb.toFixed(0)} MB; target ≤ +100 MB)`);
    }
    if (only.includes('wait')) {
      const r = await readerWait({ scratch, mb: mb ?? WAIT_MB });
      console.log(`wait: a ${r.bodyMb.toFixed(0)} MB POST took ${(r.writeMs / 1000).toFixed(1)} s; ${r.reads} reads meanwhile waited ${r.medianWaitMs.toFixed(0)} ms median, ${r.maxWaitMs.toFixed(0)} ms at most`);
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
