import { describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkRun, notCountable, recordRun, runFingerprint, runProbe, tagged } from '../../../src/import/account/unchanged.js';
import type { HttpRequest, Transport } from '../../../src/client/transport.js';
import type { ImportOptions } from '../../../src/import/options.js';

/** Issue 35's unchanged re-runs: the client's rules, without a service (its side: test/server/runs-pure.test.ts). */

const FP = `${'ab'.repeat(32)}.${'cd'.repeat(32)}`;
/** A run as askUnchanged makes it, its hash already known. */
const counted = (started: number) => ({ fingerprint: Promise.resolve(FP), id: RUN, started, stop: () => {} });
const RUN = '0b7c1e6a-5d0f-4f52-9a57-3c2f1d0e9b11';

/** A transport answering every request with `status` and `body` (a service without the functions, or a failing one). */
const answering = (status: number, body: string, seen: HttpRequest[] = []): Transport => ({
  send: async (req) => (seen.push(req), { status, headers: {}, body }),
});

describe('the client: when a run may be skipped or recorded', () => {
  it('a service without the functions, a refusal or a reset means a full run (a mocked transport: no real PostgREST here, and a reset mid-call cannot be produced on demand)', async () => {
    expect(await checkRun(answering(404, '{"code":"PGRST202"}'), FP)).toBeNull();
    expect(await checkRun(answering(401, '{"code":"PGRST301"}'), FP)).toBeNull();
    expect(await checkRun(answering(200, '"odd"'), FP)).toBeNull();
    const broken: Transport = { send: () => Promise.reject(new Error('connection reset')) };
    expect(await checkRun(broken, FP)).toBeNull();
    expect(await recordRun(broken, counted(3), 10)).toBe(false);
  });

  it('reads what the service says', async () => {
    expect(await checkRun(answering(200, '{"fresh":true,"records":7,"finished":"2026-11-28T15:31:48+00:00"}'), FP)).toEqual({ fresh: true, records: 7, finished: '2026-11-28T15:31:48+00:00', fingerprint: null });
    expect(await checkRun(answering(200, `{"fresh":true,"records":7,"finished":"2026-11-28T15:31:48+00:00","fingerprint":"${FP}"}`), FP)).toMatchObject({ fresh: true, fingerprint: FP });
    expect(await checkRun(answering(200, '{"fresh":false,"generation":41}'), FP)).toEqual({ fresh: false, generation: 41 });
    expect(await checkRun(answering(200, '{"fresh":false,"generation":null}'), FP)).toEqual({ fresh: false, generation: null });
  });

  it("tags every request of the run with Prefer: run=, beside what it already prefers", () => {
    const run = counted(1);
    const post: HttpRequest = { method: 'POST', path: '/tracks', headers: { Prefer: 'return=minimal' } };
    const get: HttpRequest = { method: 'GET', path: '/tracks' };
    expect(tagged(post, run).headers).toEqual({ Prefer: `return=minimal, run=${RUN}` });
    expect(tagged(get, run).headers).toEqual({ Prefer: `run=${RUN}` });
    expect(post.headers).toEqual({ Prefer: 'return=minimal' });
    const untouched: HttpRequest = { method: 'GET', path: '/tracks' };
    expect(tagged(untouched, null)).toBe(untouched);
  });

  it('dry runs, resumes, row checks, directory steps and --recheck are never skipped or recorded', () => {
    const base = { table: { name: 'tracks' }, input: 'x.csv', unchangedRuns: true } as unknown as ImportOptions;
    expect(notCountable(base)).toBeNull();
    expect(notCountable({ ...base, dryRun: true })).toBe('a dry run');
    expect(notCountable({ ...base, resume: true })).toBe('--resume');
    expect(notCountable({ ...base, unchangedRuns: false })).toBe('not asked (--recheck)');
    expect(notCountable({ ...base, unchangedRuns: undefined })).toBe('not asked (--recheck)');
    expect(notCountable({ ...base, checks: [{ name: 'q', check: () => null }] })).toBe('--check');
    expect(notCountable({ ...base, knownIds: () => false })).toBe('a directory run');
  });

  it('the probe reads the settings, the size and both ends of the file; the hash reads every byte', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'catalog-probe-'));
    try {
      const opts = { table: { name: 'tracks', columns: [] }, input: 'x.csv', unchangedRuns: true } as unknown as ImportOptions;
      const file = (name: string, body: Buffer) => (writeFileSync(join(dir, name), body), join(dir, name));
      const big = Buffer.alloc(300 * 1024, 'a');
      const middle = Buffer.from(big);
      middle[150 * 1024] = 0x62; // one byte changed where the probe does not look
      const [a, b] = [file('a.csv', big), file('b.csv', middle)];
      expect(await runProbe(opts, a)).toBe(await runProbe(opts, b));
      expect(await runFingerprint(opts, a).hash).not.toBe(await runFingerprint(opts, b).hash);
      const tail = Buffer.from(big);
      tail[tail.length - 1] = 0x62;
      expect(await runProbe(opts, file('c.csv', tail))).not.toBe(await runProbe(opts, a));
      expect(await runProbe(opts, file('d.csv', big.subarray(1)))).not.toBe(await runProbe(opts, a));
      expect(await runProbe({ ...opts, dedupe: 'first' }, a)).not.toBe(await runProbe(opts, a));
      // a file shorter than both ends: the probe reads it whole (no byte twice, none left out)
      const small = file('e.csv', Buffer.from('id,name\n1,x\n'));
      expect(await runProbe(opts, small)).not.toBe(await runProbe(opts, file('f.csv', Buffer.from('id,name\n1,y\n'))));
      expect(await runProbe(opts, small)).toMatch(/^[0-9a-f]{64}$/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
