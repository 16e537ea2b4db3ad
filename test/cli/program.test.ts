import { describe, expect, it } from 'vitest';
import { buildProgram, collectionsNeeded } from '../../src/cli/main.js';
import { TABLES } from '../../src/schema/catalog.js';
import { runCli, testContext } from './support.js';

describe('building only the collection a command line uses', () => {
  it('reads which collection a command line names, past the global options', () => {
    expect(collectionsNeeded(['labels', 'list'])).toEqual(['labels']);
    expect(collectionsNeeded(['--url', 'http://h', '-H', 'apikey:k', '-o', 'json', 'tracks', 'get', 'x'])).toEqual(['tracks']);
    expect(collectionsNeeded(['--url=http://h', '-v', 'artists'])).toEqual(['artists']);
    expect(collectionsNeeded(['--profile', 'labels', 'genres', 'list'])).toEqual(['genres']);
    // Another command, or none at all: no collection built in full.
    expect(collectionsNeeded(['--help'])).toEqual([]);
    expect(collectionsNeeded(['--url', 'http://h', 'serve', '--port', '0'])).toEqual([]);
    // help and completion walk the whole tree; anything unknown gets it too.
    expect(collectionsNeeded(['help', 'labels'])).toBe('all');
    expect(collectionsNeeded(['completion', 'bash'])).toBe('all');
    expect(collectionsNeeded(['labelz'])).toBe('all');
    expect(collectionsNeeded(['--', 'labels'])).toBe('all');
  });

  it('shows the same root help whichever collection is built in full', async () => {
    const { ctx } = testContext();
    const whole = (await buildProgram(ctx)).helpInformation();
    expect(whole).toMatch(/Collections:\n {2}artists +Artists: list, get, add/);
    for (const args of [['--help'], ['labels', 'list'], ['serve'], ...TABLES.map((t) => [t.name])]) {
      expect((await buildProgram(ctx, args)).helpInformation(), args.join(' ')).toBe(whole);
    }
  });

  it('builds every verb of the collection named, and placeholders for the rest', async () => {
    const { ctx } = testContext();
    const program = await buildProgram(ctx, ['releases', 'list']);
    const verbs = (name: string) => program.commands.find((c) => c.name() === name)!.commands.map((c) => c.name());
    expect(verbs('releases')).toEqual(['list', 'get', 'add', 'update', 'remove', 'describe', 'import', 'export']);
    expect(verbs('labels')).toEqual([]);
  });

  it('still runs the right command when the argv scan guessed wrong (a placeholder hands over to the whole tree)', async () => {
    // `-qo seed` is -q plus `-o seed`: the scan takes `seed` for the command and builds no collection.
    expect(collectionsNeeded(['-qo', 'seed', 'labels', 'list'])).toEqual([]);
    const r = await runCli(['-qo', 'seed', 'labels', 'list', '--dry-run']);
    expect(r.err).toContain("unknown output format 'seed'");
    expect(r.code).toBe(2);
    const ok = await runCli(['-qo', 'json', 'labels', 'list', '--url', 'http://127.0.0.1:9', '--dry-run']);
    expect(ok.code).toBe(0);
    expect(ok.out).toMatch(/^curl -X GET http:\/\/127\.0\.0\.1:9\/labels/);
  });
});
