import { writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../support/stores.js';
import { ensureBuilt, startServe } from './support.js';
import { HAS_PROC, listeningPorts, waitForLines } from './support-serve.js';

ensureBuilt();

/** GET over a keep-alive agent: the rows' count and the local port of the connection it went over. */
function get(url: string, agent: Agent): Promise<{ rows: number; localPort: number }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent }, (res) => {
      const localPort = res.socket.localPort ?? 0; // the socket goes back to the agent once the body is read
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ rows: (JSON.parse(body) as unknown[]).length, localPort }));
    });
    req.on('error', reject);
    req.end();
  });
}

// Issue 38 item 1: the signals as a PostgREST operator sends them; none stops the service, and none opens Node's inspector.
describe('catalog serve and SIGUSR1, SIGUSR2, SIGHUP', () => {
  it('keeps serving through each, takes a changed config file on SIGUSR2 and SIGHUP over the same connection, and never listens on 9229', async () => {
    const dir = tempDir('signals-');
    const config = join(dir, 'serve.yaml');
    writeFileSync(config, 'max-rows: 2\n');
    const serve = await startServe(['--data', join(dir, 'c'), '--config', config]);
    const port = Number(new URL(serve.url).port);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const pid = serve.proc.pid!;
    try {
      const post = await fetch(`${serve.url}/labels`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify([{ name: 'A' }, { name: 'B' }, { name: 'C' }]) });
      expect(post.status).toBe(201);
      const before = await get(`${serve.url}/labels`, agent);
      expect(before.rows).toBe(2);

      process.kill(pid, 'SIGUSR1');
      await waitForLines(serve.stderr, /SIGUSR1: schema description reloaded \(catalog schema version \d+\)/);
      if (HAS_PROC) expect(listeningPorts([pid])).toEqual([port]); // no inspector (9229), nothing else
      else console.warn('SKIPPED the listening-socket check: no /proc on this machine');

      writeFileSync(config, 'max-rows: 1\n');
      process.kill(pid, 'SIGUSR2');
      await waitForLines(serve.stderr, /SIGUSR2: configuration reloaded \(changed: max-rows\)/);
      const after = await get(`${serve.url}/labels`, agent);
      expect(after).toEqual({ rows: 1, localPort: before.localPort }); // the new setting, on the connection opened before

      // SIGHUP reloads as SIGUSR2 does; a setting that takes a restart is said, and kept
      writeFileSync(config, 'max-rows: 3\nhost: 127.0.0.2\n');
      process.kill(pid, 'SIGHUP');
      await waitForLines(serve.stderr, /SIGHUP: configuration reloaded \(changed: max-rows\)/);
      await waitForLines(serve.stderr, /SIGHUP: host changed, which takes a restart/);
      expect((await get(`${serve.url}/labels`, agent)).rows).toBe(3);

      // a configuration that does not read is refused, and the one in force stays
      writeFileSync(config, 'max-rows: many\n');
      process.kill(pid, 'SIGUSR2');
      await waitForLines(serve.stderr, /SIGUSR2: the configuration was not reloaded \(--max-rows needs a whole number ≥ 0, not 'many'\); the one in force stays/);
      expect((await get(`${serve.url}/labels`, agent)).rows).toBe(3);
      if (HAS_PROC) expect(listeningPorts([pid])).toEqual([port]);
    } finally {
      agent.destroy();
      expect(await serve.stop()).toBe(0);
    }
  });
});
