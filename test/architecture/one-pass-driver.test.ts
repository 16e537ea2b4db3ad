import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SRC, sources } from './sources.js';

/**
 * Issue 25, item 4: one import pipeline. An import reads its input only through the pass driver
 * (src/import/pass/pass.ts), whose two visitors are the scan and the load; a module that opened
 * the bytes or iterated a reader's records itself would be a second pipeline (and another read of
 * the file).
 */

/** Opening a CSV file's bytes for the transcoder, or walking a reader's records. */
const READS_INPUT = /\bByteCsvFile\.open\(|\.records\(\)/;

/** The modules that may, and why. */
const READERS: Record<string, string> = {
  'import/pass/pass.ts': 'the pass driver (and its malformed-CSV error path)',
  // the header row only: its checks and messages are the record reader's; the driver reads the rest
  'import/dedupe/dedupe.ts': 'the scan reads the CSV header row before the driver starts',
  // not a second pipeline: a plan's source file (another system's shape) is made into a file of
  // ours first, which the import then reads through the driver like any other input
  'import/plan/plan-transform.ts': 'a plan makes another system\'s file into a file of ours before the import',
};

describe('one import pipeline', () => {
  const files = sources(SRC).map((f) => [relative(SRC, f).split('\\').join('/'), readFileSync(f, 'utf8')] as const);

  it('only the pass driver reads an import’s input (the scan’s header row aside)', () => {
    const offenders = files.filter(([rel, text]) => rel.startsWith('import/') && !rel.startsWith('import/readers/') && !(rel in READERS) && READS_INPUT.test(text)).map(([rel]) => rel);
    expect(offenders).toEqual([]);
    // the pattern finds the ways an input has been read here, and the driver's own reading
    for (const line of ['const file = await ByteCsvFile.open(c.source.path);', 'for await (const rec of reader.records()) {', 'for await (const r of sourceRecords(source).records())']) {
      expect(READS_INPUT.test(line), line).toBe(true);
    }
    expect(files.some(([rel, text]) => rel === 'import/pass/pass.ts' && READS_INPUT.test(text))).toBe(true);
  });

  it('the scan and the load are the driver’s visitors', () => {
    const text = (rel: string) => files.find(([r]) => r === rel)?.[1] ?? '';
    expect(text('import/dedupe/dedupe.ts')).toMatch(/class ScanVisitor implements PassVisitor/);
    expect(text('import/pass/load.ts')).toMatch(/class LoadVisitor implements PassVisitor/);
    expect(text('import/dedupe/dedupe.ts')).toMatch(/runPass\(/);
    expect(text('import/pass/load.ts')).toMatch(/runPass\(/);
  });
});
