import { describe, expect, it } from 'vitest';
import { runCli, type TestContextOptions, useTestService } from './support.js';

/** Issue 26: `add`/`update` resolve a release's label, genre and subgenre names to ids. */

const service = useTestService();
const cli = (args: string[], o: TestContextOptions = {}) => runCli(['--url', service.url, ...args], o);

describe('references by name in add and update', () => {
  it("releases add label='…' stores the label's id; update changes it; an unknown name is refused with a did-you-mean", async () => {
    const idOf = async (name: string) => ([JSON.parse((await cli(['labels', 'add', `name=${name}`, '-o', 'json'])).out)].flat()[0] as { id: string }).id;
    const blueId = await idOf('Blue Note');
    const otherId = await idOf('Impulse!');
    const added = await cli(['releases', 'add', 'release_title=Moanin', 'label= blue  NOTE', '-o', 'json']);
    expect(added.code, added.err).toBe(0);
    const row = [JSON.parse(added.out)].flat()[0] as { id: string; label_id: string };
    expect(row.label_id).toBe(blueId);
    const updated = await cli(['releases', 'update', row.id, 'label=impulse!', '-o', 'json']);
    expect([JSON.parse(updated.out)].flat()[0]).toMatchObject({ label_id: otherId, label: 'impulse!' });
    const unknown = await cli(['releases', 'add', 'release_title=Nope', 'label=Blu Note']);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toMatch(/label “Blu Note” is not in labels\.name; did you mean “Blue Note”\?/);
    expect((await service.store.query(`select 1 from releases where release_title = 'Nope'`)).rows).toEqual([]);
    const badRef = await cli(['releases', 'add', 'release_title=Z', 'label=Blue Note', '--ref', 'label=labels.nme']);
    expect(badRef.code).toBe(2);
    expect(badRef.err).toMatch(/--ref label=labels\.nme: labels has no field "nme"/);
  });
});
