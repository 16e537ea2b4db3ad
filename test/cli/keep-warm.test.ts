import { describe, expect, it } from 'vitest';
import type { ServerControl } from '../../src/cli/context.js';
import { runCli, useTestService } from './support.js';

const service = useTestService();

/** A ServerControl whose directory is held by a background holder of `version` until stopped. */
function heldBy(version: string) {
  const calls = { stopped: 0, opened: 0 };
  let held = true;
  const control: ServerControl = {
    readServeLock: () => (held ? { pid: 4242, url: service.url } : null),
    currentHolder: async () => (held ? { pid: 4242, url: service.url, background: true, version } : null),
    stopBackgroundHolder: async () => {
      calls.stopped++;
      held = false;
      return true;
    },
    startServer: async () => {
      calls.opened++;
      return { url: service.url, close: async () => {} };
    },
  };
  return { control, calls };
}

describe('the background holder and upgrades (issue 15)', () => {
  it('a holder left by another version of the tool is stopped and replaced, once', async () => {
    const { control, calls } = heldBy('0.0.0-old');
    const r = await runCli(['labels', 'list', '-o', 'json'], { server: control });
    expect(r.code, r.err).toBe(0);
    expect(calls).toEqual({ stopped: 1, opened: 1 });
  });

  it('a holder of this version is used as it is', async () => {
    const { control, calls } = heldBy('0.0.0-test');
    const r = await runCli(['labels', 'list', '-o', 'json'], { server: control });
    expect(r.code, r.err).toBe(0);
    expect(calls).toEqual({ stopped: 0, opened: 0 });
  });
});
