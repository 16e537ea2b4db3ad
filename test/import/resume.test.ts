import { existsSync, readFileSync, appendFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { importFile, type ImportOptions } from '../../src/import/engine.js';
import type { Store } from '../../src/store/store.js';
import { disposeStore, STORE_KINDS } from '../support/stores.js';
import { bodyRows, countOf, countsOf, file, rowsOf, serverFor, table, tmp } from './support.js';

const id = (n: number) => `a0000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

/** Options that abort the import once `after` rows have been written (what Ctrl-C does). */
function stopAfter(after: number): Pick<ImportOptions, 'signal' | 'onProgress'> {
  const ctl = new AbortController();
  return { signal: ctl.signal, onProgress: (p) => p.written >= after && ctl.abort() };
}

for (const kind of STORE_KINDS) {
  describe.skipIf(kind.skip)(`interrupt and resume (${kind.kind})`, () => {
    let store: Store & { drop?(): Promise<void> };
    beforeEach(async () => {
      store = await kind.make();
    });
    afterEach(async () => disposeStore(store));

    it('an import stopped mid-way and resumed ends with exactly the file’s rows', async () => {
      const lines = ['id,stage_name'];
      for (let i = 1; i <= 2000; i++) lines.push(`${id(i)},"Artist, ${i}"`);
      const input = file(tmp(), 'artists.csv', `${lines.join('\n')}\n`);
      const opts = { table: table('artists'), input, batchRows: 100, concurrency: 3 };

      const first = await importFile({ ...opts, ...stopAfter(500) }, serverFor(store));
      expect(first.interrupted).toBe(true);
      expect(first.checkpointFile).toBe(`${input}.checkpoint.json`);
      const cp = JSON.parse(readFileSync(first.checkpointFile!, 'utf8'));
      const landed = await countOf(store, 'artists');
      // every batch in flight finished before the checkpoint: it matches the database exactly
      expect(cp.committed).toBe(landed);
      expect(landed).toBeGreaterThanOrEqual(500);
      expect(landed).toBeLessThan(2000);
      expect(first.stoppedAtLine).toBe(landed + 2);

      const server = serverFor(store);
      const second = await importFile({ ...opts, resume: true }, server);
      expect(second).toMatchObject({ interrupted: false, resumedFrom: landed, inserted: 2000, updated: 0, rejected: 0 });
      expect(await countOf(store, 'artists')).toBe(2000);
      expect(existsSync(first.checkpointFile!)).toBe(false);
      // nothing before the checkpoint was read back or sent again
      const sent = server.log.filter((l) => l.req.method === 'POST').reduce((n, l) => n + bodyRows(l.req), 0);
      expect(sent).toBe(2000 - landed);
    });

    it('rows without ids (plain inserts) are not doubled by a resume', async () => {
      const lines = ['name'];
      for (let i = 1; i <= 1000; i++) lines.push(`Label ${i}`);
      const input = file(tmp(), 'labels.csv', `${lines.join('\n')}\n`);
      const opts = { table: table('labels'), input, batchRows: 50, concurrency: 2 };
      const first = await importFile({ ...opts, ...stopAfter(300) }, serverFor(store));
      expect(first.interrupted).toBe(true);
      await importFile({ ...opts, resume: true }, serverFor(store));
      const names = (await rowsOf(store, 'labels', 'id,name')).map((r) => r.name as string);
      expect(names).toHaveLength(1000);
      expect(new Set(names).size).toBe(1000);
    });

    it('--dedupe first still skips a repeated key whose first row was committed before the interruption', async () => {
      const lines = ['id,stage_name'];
      for (let i = 1; i <= 600; i++) lines.push(`${id(i)},First ${i}`);
      for (let i = 1; i <= 5; i++) lines.push(`${id(i)},Again ${i}`);
      const input = file(tmp(), 'artists.csv', `${lines.join('\n')}\n`);
      const opts = { table: table('artists'), input, batchRows: 50, concurrency: 1, dedupe: 'first' as const };
      const first = await importFile({ ...opts, ...stopAfter(100) }, serverFor(store));
      expect(first.interrupted).toBe(true);
      const s = await importFile({ ...opts, resume: true }, serverFor(store));
      expect(s).toMatchObject({ inserted: 600, updated: 0, deduped: 5 });
      const names = (await rowsOf(store, 'artists', 'id,stage_name')).map((r) => r.stage_name as string);
      expect(names.filter((n) => n.startsWith('Again'))).toEqual([]);
    });

    it('--dedupe error rejects both rows of a repeated key when the first was before the interruption (COPY lines with labels by name)', async () => {
      await importFile({ table: table('labels'), input: file(tmp(), 'labels.csv', 'name\nBlue Note\n') }, serverFor(store));
      const lines = ['id,release_title,label'];
      for (let i = 1; i <= 600; i++) lines.push(`${id(i)},${i === 1 ? 'Dup first' : `Release ${i}`},Blue Note`);
      lines.push(`${id(1)},Dup again,Blue Note`);
      const input = file(tmp(), 'releases.csv', `${lines.join('\n')}\n`);
      const opts = { table: table('releases'), input, batchRows: 50, concurrency: 1, dedupe: 'error' as const };
      const first = await importFile({ ...opts, ...stopAfter(100) }, serverFor(store));
      expect(first.interrupted).toBe(true);
      const s = await importFile({ ...opts, resume: true }, serverFor(store));
      expect(s.interrupted).toBe(false);
      const titles = (await rowsOf(store, 'releases', 'id,release_title')).map((r) => r.release_title as string);
      expect(titles.filter((t) => t.startsWith('Dup'))).toEqual([]);
      expect(titles.length).toBe(599);
    });

    it('--dedupe error with a check: a row the check rejected before the interruption does not count as an occurrence', async () => {
      const needsCity = { name: 'needs-city', check: (row: Record<string, unknown>) => (row.city ? null : { code: 'CHECK', message: 'city is required' }) };
      const lines = ['id,stage_name,city'];
      lines.push(`${id(1)},No city,`);
      for (let i = 2; i <= 600; i++) lines.push(`${id(i)},Artist ${i},Oslo`);
      lines.push(`${id(1)},Has a city,Paris`);
      const input = file(tmp(), 'artists.csv', `${lines.join('\n')}\n`);
      const opts = { table: table('artists'), input, batchRows: 50, concurrency: 1, dedupe: 'error' as const, checks: [needsCity] };
      const whole = await importFile({ ...opts, input: file(tmp(), 'whole.csv', `${lines.join('\n')}\n`), checkpointPath: null, dryRun: true }, serverFor(store));
      expect(whole).toMatchObject({ rejected: 1 }); // the check's reject alone: id 1 has one valid occurrence
      const first = await importFile({ ...opts, ...stopAfter(100) }, serverFor(store));
      expect(first.interrupted).toBe(true);
      await importFile({ ...opts, resume: true }, serverFor(store));
      const names = (await rowsOf(store, 'artists', 'id,stage_name')).map((r) => r.stage_name as string);
      expect(names).toContain('Has a city');
      expect(names).not.toContain('No city');
    });

    it('refuses to resume against a changed file, and starts over without a checkpoint', async () => {
      const lines = ['id,stage_name'];
      for (let i = 1; i <= 600; i++) lines.push(`${id(i)},A${i}`);
      const dir = tmp();
      const input = file(dir, 'artists.csv', `${lines.join('\n')}\n`);
      const opts = { table: table('artists'), input, batchRows: 50, concurrency: 1 };
      await importFile({ ...opts, ...stopAfter(100) }, serverFor(store));
      appendFileSync(input, `${id(601)},A601\n`);
      await expect(importFile({ ...opts, resume: true }, serverFor(store))).rejects.toThrow(/not the file the checkpoint was made for/);

      const notices: string[] = [];
      const other = file(dir, 'other.csv', 'id,stage_name\n');
      const s = await importFile({ ...opts, input: other, resume: true, onNotice: (m) => notices.push(m) }, serverFor(store));
      expect(s.resumedFrom).toBe(0);
      expect(notices.join('\n')).toMatch(/no checkpoint/);
    });

    it('rejects are written once across an interruption and a resume', async () => {
      const lines = ['id,stage_name,birthdate'];
      for (let i = 1; i <= 400; i++) lines.push(`${id(i)},A${i},${i % 50 === 0 ? 'bad' : ''}`);
      const input = file(tmp(), 'artists.csv', `${lines.join('\n')}\n`);
      const opts = { table: table('artists'), input, batchRows: 40, concurrency: 2 };
      await importFile({ ...opts, ...stopAfter(150) }, serverFor(store));
      const s = await importFile({ ...opts, resume: true }, serverFor(store));
      expect(s.rejected).toBe(8);
      const rejectLines = readFileSync(s.rejectsFile!, 'utf8').trim().split('\n');
      expect(rejectLines).toHaveLength(1 + 8);
      expect(await countOf(store, 'artists')).toBe(392);
    });
  });
}
