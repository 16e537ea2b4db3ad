import { describe, expect, it } from 'vitest';
import { runCli, useTestService } from './support.js';

const service = useTestService();

/** `catalog <collection> describe` names the computed field source_ids (issue 35), which the root description shows in each collection's description, not as a property. */
describe('describe shows computed fields', () => {
  it('as data, beside the fields (which stay the collection’s columns)', async () => {
    const r = await runCli(['--url', service.url, 'tracks', 'describe', '-o', 'json']);
    expect(r.code, r.err).toBe(0);
    const doc = JSON.parse(r.out);
    expect(doc.fields.map((f: { field: string }) => f.field)).not.toContain('source_ids');
    expect(doc.computed).toEqual([expect.objectContaining({ field: 'source_ids', type: 'jsonb' })]);
  });

  it('in the table, under its own heading', async () => {
    const r = await runCli(['--url', service.url, 'labels', 'describe', '-o', 'table']);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/Computed fields:\n {2}source_ids \(jsonb, computed, not in \*\): the record's id in each source system/);
    expect(r.out.indexOf('Computed fields:')).toBeLessThan(r.out.indexOf('Embeds:'));
  });
});
