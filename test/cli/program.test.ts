import { describe, expect, it } from 'vitest';
import { VERBS } from '../../src/cli/commands/collection.js';
import { buildProgram, commandFocus, sendsRequests } from '../../src/cli/main.js';
import { TABLES } from '../../src/schema/catalog.js';
import { runCli, testContext } from './support.js';

describe('building only the collection a command line uses', () => {
  it('reads which collection and verb a command line names, past the global options', () => {
    expect(commandFocus(['labels', 'list'])).toEqual({ collection: 'labels', verb: 'list' });
    expect(commandFocus(['--url', 'http://h', '-H', 'apikey:k', '-o', 'json', 'tracks', 'get', 'x'])).toEqual({ collection: 'tracks', verb: 'get' });
    expect(commandFocus(['labels', 'rm', 'x', '--yes'])).toEqual({ collection: 'labels', verb: 'remove' });
    expect(commandFocus(['--profile', 'labels', 'genres', 'ls'])).toEqual({ collection: 'genres', verb: 'list' });
    // The collection's own help (asked for anywhere, or by naming no verb or an unknown one) needs every verb.
    expect(commandFocus(['--url=http://h', '-v', 'artists'])).toEqual({ collection: 'artists', verb: null });
    expect(commandFocus(['labels', '--help', 'list'])).toEqual({ collection: 'labels', verb: null });
    expect(commandFocus(['labels', 'lst'])).toEqual({ collection: 'labels', verb: null });
    // Another command, or none at all: no collection built in full.
    expect(commandFocus(['--help'])).toEqual({ collection: null, verb: null });
    expect(commandFocus(['--url', 'http://h', 'serve', '--port', '0'])).toEqual({ collection: null, verb: null });
    // help and completion walk the whole tree; anything unknown gets it too.
    expect(commandFocus(['help', 'labels'])).toBe('all');
    expect(commandFocus(['completion', 'bash'])).toBe('all');
    expect(commandFocus(['labelz'])).toBe('all');
    expect(commandFocus(['--', 'labels'])).toBe('all');
  });

  it('knows each verb by the name and aliases its command has', async () => {
    const { ctx } = testContext();
    const labels = (await buildProgram(ctx)).commands.find((c) => c.name() === 'labels')!;
    expect(labels.commands.map((c) => [c.name(), c.aliases()])).toEqual(VERBS.map((v) => [v.name, [...v.aliases]]));
  });

  it('shows the same root help whichever collection is built in full', async () => {
    const { ctx } = testContext();
    const whole = (await buildProgram(ctx)).helpInformation();
    expect(whole).toMatch(/Collections:\n {2}artists +Artists: list, get, add/);
    for (const args of [['--help'], ['labels', 'list'], ['labels', 'rm'], ['serve'], ...TABLES.map((t) => [t.name])]) {
      expect((await buildProgram(ctx, args)).helpInformation(), args.join(' ')).toBe(whole);
    }
  });

  it('builds the verb named in full, and placeholders for the other verbs and collections', async () => {
    const { ctx } = testContext();
    const program = await buildProgram(ctx, ['releases', 'list']);
    const verbs = (name: string) => program.commands.find((c) => c.name() === name)!.commands.map((c) => [c.name(), c.options.length > 0]);
    expect(verbs('releases')).toEqual(VERBS.map((v) => [v.name, v.name === 'list']));
    expect(verbs('labels')).toEqual([]);
    const whole = await buildProgram(ctx, ['releases', '--help']);
    expect(whole.commands.find((c) => c.name() === 'releases')!.commands.length).toBeGreaterThan(0);
    expect(whole.commands.find((c) => c.name() === 'releases')!.commands.every((c) => c.options.length > 0 || c.name() === 'describe')).toBe(true);
  });

  it('still runs the right command when the argv scan guessed wrong (a placeholder hands over to the whole tree)', async () => {
    // `-qo seed` is -q plus `-o seed`: the scan takes `seed` for the command and builds no collection.
    expect(commandFocus(['-qo', 'seed', 'labels', 'list'])).toEqual({ collection: null, verb: null });
    const r = await runCli(['-qo', 'seed', 'labels', 'list', '--dry-run']);
    expect(r.err).toContain("unknown output format 'seed'");
    expect(r.code).toBe(2);
    // Here it takes `list` for the verb, but commander runs `get` (with -o list).
    expect(commandFocus(['labels', '-qo', 'list', 'get', 'x'])).toEqual({ collection: 'labels', verb: 'list' });
    const verb = await runCli(['labels', '-qo', 'list', 'get', 'x', '--dry-run']);
    expect(verb.err).toContain("unknown output format 'list'");
    expect(verb.code).toBe(2);
    const ok = await runCli(['-qo', 'json', 'labels', 'list', '--url', 'http://127.0.0.1:9', '--dry-run']);
    expect(ok.code).toBe(0);
    expect(ok.out).toMatch(/^curl -X GET http:\/\/127\.0\.0\.1:9\/labels/);
  });
});

describe('guessing whether a command line will open the embedded catalog (to warm it up early)', () => {
  it('says yes for the verbs that send requests, and which of them move many rows', () => {
    expect(sendsRequests(['labels', 'list'])).toEqual({ bulk: false });
    expect(sendsRequests(['-o', 'json', 'labels', 'ls', '--where', 'name=x'])).toEqual({ bulk: false });
    expect(sendsRequests(['labels', 'list', '--all'])).toEqual({ bulk: true });
    expect(sendsRequests(['tracks', 'import', 'tracks.csv'])).toEqual({ bulk: true });
    expect(sendsRequests(['seed'])).toEqual({ bulk: true });
    expect(sendsRequests(['artists', 'rm', 'x', '--yes'])).toEqual({ bulk: false });
  });

  it('says no when a URL or profile names a service, when nothing is sent, or for help', () => {
    expect(sendsRequests(['labels', 'list', '--url', 'http://h'])).toBeNull();
    expect(sendsRequests(['--url=http://h', 'labels', 'list'])).toBeNull();
    expect(sendsRequests(['--profile', 'staging', 'labels', 'list'])).toBeNull();
    expect(sendsRequests(['labels', 'list', '--dry-run'])).toBeNull();
    expect(sendsRequests(['labels', 'list', '--help'])).toBeNull();
    expect(sendsRequests(['labels', 'describe'])).toBeNull();
    expect(sendsRequests(['changelog'])).toBeNull();
    expect(sendsRequests(['--help'])).toBeNull();
  });
});
