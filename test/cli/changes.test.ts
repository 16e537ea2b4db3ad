import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appTransport, type Transport } from '../../src/client/transport.js';
import { sinceMoment } from '../../src/cli/commands/changes.js';
import { createApp } from '../../src/server/app.js';
import type { Store } from '../../src/store/store.js';
import { makePGliteStore } from '../support/stores.js';
import { runCli } from './support.js';

const NOW = new Date(2026, 10, 25, 10, 30).getTime(); // 25 Nov 2026, 10:30 local time

describe('--since', () => {
  it.each([
    ['yesterday', new Date(2026, 10, 24).toISOString()],
    ['this-month', new Date(2026, 10, 1).toISOString()],
    ['-2h', new Date(NOW - 7_200_000).toISOString()],
    ['2026-11-01', new Date(2026, 10, 1).toISOString()],
    ['2026-11-01T09:00:00Z', '2026-11-01T09:00:00.000Z'],
    ['2026-11-01 09:00:00+02:00', '2026-11-01T07:00:00.000Z'],
  ])('%s is %s', (text, iso) => {
    expect(sinceMoment(text, NOW)).toBe(iso);
  });

  it.each(['someday', '2026-13-01', '2026-02-30', '2026-11-01T25:00:00Z', '11/01/2026', ''])('%s is refused, naming the forms', (text) => {
    expect(() => sinceMoment(text, NOW)).toThrow(/is not a moment/);
  });
});

/**
 * A plain PostgREST has no /removals. Faked by the one fault we cannot make with our own service
 * (which always has it): its requests for /removals go to a table the real server does not have,
 * so the answer is the server's own 404 for a missing table.
 */
describe('against a service without /removals (its requests sent to a table the server does not have)', () => {
  let store: Store;
  let transport: Transport;
  beforeAll(async () => {
    store = await makePGliteStore();
    const app = appTransport(createApp({ store, log: () => {} }));
    const moved = <T extends { path: string }>(req: T): T => (req.path === '/removals' ? { ...req, path: '/removals_not_served' } : req);
    transport = { send: (req) => app.send(moved(req)), stream: (req) => app.stream!(moved(req)) };
  });
  afterAll(async () => store.close());

  it('shows additions and changes, and warns that removals are unknown (exit 0)', async () => {
    const added = await runCli(['labels', 'add', 'name=Plain Label', '-o', 'json'], { transport });
    expect(added.code, added.err).toBe(0);
    const gone = await runCli(['labels', 'add', 'name=Gone Label', '-o', 'json'], { transport });
    const goneId = (JSON.parse(gone.out) as { id: string }).id;
    expect((await runCli(['labels', 'remove', goneId, '--yes'], { transport })).code).toBe(0);
    const r = await runCli(['changes', '--since', 'yesterday', '-o', 'json'], { transport });
    expect(r.code, r.err).toBe(0);
    const rows = JSON.parse(r.out) as Array<{ title: string; change: string }>;
    expect(rows.map((c) => [c.title, c.change])).toEqual([['Plain Label', 'added']]);
    expect(r.err).toMatch(/warning: removals are unknown: the service does not record them \(it has no \/removals collection/);
    expect(r.err).toMatch(/shown are additions and changes since yesterday/);
  });
});
