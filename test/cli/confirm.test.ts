import { describe, expect, it } from 'vitest';
import { appTransport, type HttpRequest, type Transport } from '../../src/client/transport.js';
import { createApp } from '../../src/server/app.js';
import { makePGliteStore } from '../support/stores.js';
import { runCli, type TestContextOptions, useTestService } from './support.js';

const service = useTestService();
const cli = (args: string[], o: TestContextOptions = {}) => runCli(['--url', service.url, ...args], o);

describe('update --where works like remove', () => {
  it('names the rows and asks on a terminal; declining changes nothing; without a terminal it needs --yes', async () => {
    const added = await cli(['genres', 'add', '--json', '[{"name":"upd Alpha"},{"name":"upd Beta"},{"name":"upd Gamma"}]', '-o', 'json']);
    expect(added.code).toBe(0);
    const refused = await cli(['genres', 'update', '--where', 'name~upd *', 'name=Changed', '-o', 'json']);
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(/this would update 3 genres: pass --yes/);

    const asked: string[] = [];
    const no = await cli(['genres', 'update', '--where', 'name~upd *', 'name=Changed'], { stdinTTY: true, prompter: { confirm: async (m) => (asked.push(m), false) } });
    expect(no.code).toBe(0);
    expect(no.err).toMatch(/Nothing updated/);
    expect(asked[0]).toBe('Update 3 genres (name): “upd Alpha”, “upd Beta”, “upd Gamma”?');
    const still = await cli(['genres', 'list', '--where', 'name=Changed', '-o', 'json']);
    expect(JSON.parse(still.out)).toEqual([]);

    const yes = await cli(['genres', 'update', '--where', 'name~upd *', 'name=Changed', '--yes', '-o', 'json', '-v']);
    expect(yes.code).toBe(0);
    expect(JSON.parse(yes.out)).toHaveLength(3);
    expect(yes.err).toMatch(/PATCH .*\/genres\?name=imatch\./);
  });

  it('one matching row needs no confirmation; a terminal table shows the id, name and changed fields', async () => {
    await cli(['countries', 'add', 'name=Solo Land']);
    const r = await cli(['countries', 'update', '--where', 'name=Solo Land', 'name=Solo Land 2'], { stdoutTTY: true, columns: 120 });
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/Solo Land 2/);
    expect(r.out).not.toMatch(/created/);
  });

  it('sends max-affected with the count it showed, so rows that appear in between are not changed unseen', async () => {
    const store = await makePGliteStore();
    try {
      const app = appTransport(createApp({ store, log: () => {} }));
      const sent: HttpRequest[] = [];
      const transport: Transport = { send: (req) => (sent.push(req), app.send(req)), stream: (req) => app.stream!(req) };
      const a = await runCli(['languages', 'add', '--json', '[{"name":"ma one"},{"name":"ma two"}]'], { transport });
      expect(a.code, a.err).toBe(0);
      const r = await runCli(['languages', 'update', '--where', 'name~ma *', 'name=ma changed', '--yes', '-o', 'json'], { transport });
      expect(r.code, r.err).toBe(0);
      const patch = sent.find((q) => q.method === 'PATCH');
      expect(patch?.headers?.Prefer ?? patch?.headers?.prefer).toBe('return=representation, handling=strict, max-affected=2');
    } finally {
      await store.close();
    }
  });
});

describe('remove names the rows, and explains a foreign-key refusal', () => {
  it('asks "Remove 2 labels: “…”, “…”?"', async () => {
    await cli(['labels', 'add', '--json', '[{"name":"rm Alpha"},{"name":"rm Beta"}]']);
    const asked: string[] = [];
    await cli(['labels', 'remove', '--where', 'name~rm *'], { stdinTTY: true, prompter: { confirm: async (m) => (asked.push(m), false) } });
    expect(asked).toEqual(['Remove 2 labels: “rm Alpha”, “rm Beta”?']);
  });

  it('a label that releases still use: says which collection refers to it and how to list those rows (exit 1)', async () => {
    const label = JSON.parse((await cli(['labels', 'add', 'name=Still Used', '-o', 'json'])).out) as { id: string };
    expect((await cli(['releases', 'add', 'release_title=Uses it', `label_id=${label.id}`])).code).toBe(0);
    const r = await cli(['labels', 'remove', label.id, '--yes']);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/cannot remove: releases still refer to this label \(releases\.label_id\)/);
    expect(r.err).toContain(`catalog releases list --where 'label_id=eq.${label.id}'`);
  });

  it('--dry-run shows every request it would make: HEAD, then DELETE', async () => {
    const r = await cli(['--dry-run', 'labels', 'remove', '--where', 'name=Nobody']);
    expect(r.code).toBe(0);
    expect(r.out.trim().split('\n').map((l) => l.split(' ').slice(0, 3).join(' '))).toEqual([expect.stringMatching(/^curl --head '/), "curl -X DELETE"]);
  });
});
