import { mkdirSync, writeFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Context } from '../../src/cli/context.js';
import { runHandedOver } from '../../src/cli/main.js';
import { appTransport, type Transport } from '../../src/client/transport.js';
import { HandBack } from '../../src/holder/hand-back.js';
import { bufferOutput } from '../../src/io/streams.js';
import { createApp } from '../../src/server/app.js';
import type { Store } from '../../src/store/store.js';
import { makePGliteStore, tempDir } from '../support/stores.js';
import { runCli } from './support.js';

/** A context as the background holder's door makes one for a thin client's command (src/cli/context.ts, openDoor). */
function handedOver(transport: Transport, env: Record<string, string> = {}) {
  const home = tempDir('handed-');
  const stdout = bufferOutput();
  const stderr = bufferOutput();
  const ctx = new Context({
    io: { stdin: { isTTY: false, stream: Readable.from(['']) }, stdout, stderr },
    env: { XDG_CONFIG_HOME: `${home}/config`, XDG_CACHE_HOME: `${home}/cache`, XDG_DATA_HOME: `${home}/data`, ...env },
    home,
    transport,
    version: '0.0.0-test',
    handedOver: true,
  });
  return { ctx, stdout, stderr, home };
}

describe('what the background holder runs for a thin client (main.ts runHandedOver)', () => {
  let store: Store;
  let transport: Transport;
  beforeAll(async () => {
    store = await makePGliteStore();
    transport = appTransport(createApp({ store, log: () => {} }));
    expect((await runCli(['labels', 'add', 'name=Warp'], { transport })).code).toBe(0);
  });
  afterAll(async () => store.close());

  it('runs reading commands of a collection, as the command line would', async () => {
    for (const args of [['labels', 'list', '-o', 'json'], ['labels', 'ls', '-o', 'csv'], ['labels', 'count'], ['-o', 'json', 'labels', 'list', '--limit', '1']]) {
      const h = handedOver(transport);
      const code = await runHandedOver(args, h.ctx);
      const alone = await runCli(args, { transport });
      expect([code, h.stdout.text(), h.stderr.text()], args.join(' ')).toEqual([alone.code, alone.out, alone.err]);
      expect(code).toBe(0);
    }
  });

  it('hands back, having written nothing, every other command line', async () => {
    const lines = [
      ['labels', 'list', '--all'],
      ['labels', 'list', '-a'],
      ['labels', 'list', '--dry-run'],
      ['labels', 'list', '--help'],
      ['labels', 'list', '--url', 'http://127.0.0.1:9'],
      ['labels', 'list', '--profile', 'staging'],
      ['labels', 'add', 'name=Nope'],
      ['labels', 'remove', '--where', 'name=Warp', '--yes'],
      ['labels', 'export', '-o', 'csv'],
      ['labels', 'describe'],
      ['import', 'labels.csv'],
      ['completion', 'bash'],
      ['--version'],
      ['labels', 'list', '--', 'extra'],
      ['labels', 'list', '--where', `id=in.(${'x'.repeat(500)})`],
    ];
    for (const args of lines) {
      const h = handedOver(transport);
      await expect(runHandedOver(args, h.ctx), args.join(' ')).rejects.toBeInstanceOf(HandBack);
      expect([h.stdout.text(), h.stderr.text()], args.join(' ')).toEqual(['', '']);
    }
    expect((await runCli(['labels', 'count'], { transport })).out.trim()).toBe('1');
  });

  it('hands back a command whose configuration names a service (the default profile of its config file, CATALOG_URL)', async () => {
    const h = handedOver(transport);
    mkdirSync(`${h.home}/config/catalog`, { recursive: true });
    writeFileSync(`${h.home}/config/catalog/config.yaml`, 'default_profile: staging\nprofiles:\n  staging: { url: http://127.0.0.1:9 }\n');
    await expect(runHandedOver(['labels', 'list'], h.ctx)).rejects.toBeInstanceOf(HandBack);
    const e = handedOver(transport, { CATALOG_URL: 'http://127.0.0.1:9' });
    await expect(runHandedOver(['labels', 'list'], e.ctx)).rejects.toBeInstanceOf(HandBack);
    expect([h.stdout.text(), h.stderr.text(), e.stdout.text(), e.stderr.text()]).toEqual(['', '', '', '']);
  });
});
