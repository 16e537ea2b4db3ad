import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Parser from 'rss-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseChangelogAtom, renderChangelog, xmlText } from '../../src/cli/commands/changelog.js';
import { style } from '../../src/io/style.js';
import { CHANGELOG } from '../../src/schema/changelog.js';
import { changelogAtom } from '../../src/server/changelog.js';
import { runCli, useTestService } from './support.js';

const service = useTestService();

/** A plain HTTP server that answers every request the same way (a service without the feed, a proxy page, a newer service). */
async function fixedServer(status: number, type: string, body: string): Promise<{ url: string; close(): Promise<void> }> {
  const s: Server = createServer((_req, res) => {
    res.writeHead(status, { 'content-type': type });
    res.end(body);
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, close: () => new Promise((r) => s.close(() => r())) };
}

describe('the changelog feed', () => {
  it('reads back exactly the changelog the server publishes', () => {
    expect(parseChangelogAtom(changelogAtom('http://localhost:3000'))).toEqual(CHANGELOG);
  });

  it('is a feed a real feed parser reads (the served one)', async () => {
    const res = await fetch(`${service.url}/`, { headers: { accept: 'application/atom+xml' } });
    expect(res.headers.get('content-type')).toMatch(/^application\/atom\+xml/);
    const feed = await new Parser().parseString(await res.text());
    expect(feed.title).toBe('Music Catalog Service interface changelog');
    expect(feed.items.map((i) => i.title)).toEqual(CHANGELOG.map((v) => `Interface ${v.version}`));
  });

  it('reads entities, CDATA and changes without a marker', () => {
    expect(xmlText('a &amp; <b>b</b> &#x263A; &lt;x&gt;')).toBe('a & b ☺ <x>');
    const feed = `<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>t</title>
      <entry><title>Interface 13.0.0</title><updated>2026-02-01T00:00:00Z</updated><summary><![CDATA[a <new> version]]></summary>
      <content type="xhtml"><div><ul><li>[breaking] field x removed (GET /artists)</li><li>docs &amp; examples</li></ul></div></content></entry></feed>`;
    expect(parseChangelogAtom(feed)).toEqual([
      {
        version: '13.0.0',
        date: '2026-02-01',
        summary: 'a <new> version',
        changes: [
          { change: 'field x removed', appliesTo: 'GET /artists', breaking: true },
          { change: 'docs & examples', appliesTo: '', breaking: false },
        ],
      },
    ]);
    expect(() => parseChangelogAtom('<rss version="2.0"></rss>')).toThrow(/not an Atom feed/);
  });
});

describe('catalog changelog', () => {
  it('shows the service’s feed: versions, dates, each change marked BREAKING or not', async () => {
    const r = await runCli(['--url', service.url, 'changelog', '-o', 'table']);
    expect(r.code).toBe(0);
    expect(r.err).toBe('');
    expect(r.out).toContain('Interface 12.2.3  2025-01-25  4 breaking');
    expect(r.out).toContain('30 structure changes: 4 breaking, 26 modifications, 4 removals');
    expect(r.out.match(/^ {2}BREAKING {6}/gm)).toHaveLength(4);
    expect(r.out.match(/^ {2}non-breaking {2}/gm)).toHaveLength(3);
    expect(r.out).toMatch(/BREAKING {6}property slug removed\n {16}applies to: GET response, POST and PATCH body of \/artists/);
    // Not a terminal: no relative dates.
    expect(r.out).not.toMatch(/ago\)/);
  });

  it('adds relative dates on a terminal only', async () => {
    const r = await runCli(['--url', service.url, 'changelog'], { stdoutTTY: true, now: Date.parse('2025-03-01T00:00:00Z') });
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/2025-01-25 \(\d+ \w+ ago\)/);
  });

  it('gives the versions as data with -o json and rows with -o csv', async () => {
    const j = await runCli(['--url', service.url, 'changelog', '-o', 'json']);
    expect(JSON.parse(j.out)).toEqual(CHANGELOG);
    const c = await runCli(['--url', service.url, 'changelog', '-o', 'csv']);
    const lines = c.out.trim().split('\n');
    expect(lines[0]).toBe('version,date,breaking,change,applies_to');
    expect(lines).toHaveLength(1 + CHANGELOG[0].changes.length);
    expect(lines).toContain('12.2.3,2025-01-25,true,query parameter slug removed,"GET, PATCH, DELETE /artists"');
  });

  it('uses the built-in changelog for the embedded catalog, without opening it', async () => {
    const server = {
      startServer: () => Promise.reject(new Error('the embedded catalog must not be opened')),
      readServeLock: () => null,
    };
    const r = await runCli(['changelog', '-o', 'json'], { server });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toEqual(CHANGELOG);
    expect(r.err).toContain('Showing the changelog built into this tool (interface 12.2.3): the embedded catalog implements this version.');
  });

  it('falls back to the built-in changelog, saying so, when the service does not serve the feed', async () => {
    const s = await fixedServer(406, 'application/json; charset=utf-8', JSON.stringify({ code: 'PGRST107', details: null, hint: null, message: 'None of these media types are available: application/atom+xml' }));
    try {
      const r = await runCli(['--url', s.url, 'changelog', '-o', 'table']);
      expect(r.code).toBe(0);
      expect(r.err).toContain(`the service at ${s.url} does not serve the changelog feed (HTTP 406 PGRST107)`);
      expect(r.out).toContain('Interface 12.2.3');
    } finally {
      await s.close();
    }
  });

  it('falls back when something other than a feed answers (a proxy page)', async () => {
    const s = await fixedServer(200, 'text/html', '<html><body>Welcome</body></html>');
    try {
      const r = await runCli(['--url', s.url, 'changelog', '-o', 'json']);
      expect(r.code).toBe(0);
      expect(r.err).toContain('answered text/html instead of an Atom feed');
      expect(JSON.parse(r.out)).toEqual(CHANGELOG);
    } finally {
      await s.close();
    }
  });

  it('warns when the service is at a newer interface than this tool', async () => {
    const newer = changelogAtom('http://x').replace(/12\.2\.3/g, '12.3.0');
    const s = await fixedServer(200, 'application/atom+xml; charset=utf-8', newer);
    try {
      const r = await runCli(['--url', s.url, 'changelog', '-o', 'table']);
      expect(r.code).toBe(0);
      expect(r.out).toContain('Interface 12.3.0');
      expect(r.err).toContain("the service's newest interface version is 12.3.0; this tool was built for 12.2.3");
    } finally {
      await s.close();
    }
  });

  it('prints the request with --dry-run and fails with exit 1 when the service is down', async () => {
    const d = await runCli(['--url', service.url, '--dry-run', 'changelog']);
    expect(d.code).toBe(0);
    expect(d.out).toMatch(/^curl .*application\/atom\+xml/);
    const down = await runCli(['--url', 'http://127.0.0.1:9', 'changelog']);
    expect(down.code).toBe(1);
    expect(down.err).toContain('cannot reach http://127.0.0.1:9');
  });

  it('renders without colour codes when colour is off, and marks breaking changes in red when on', () => {
    expect(renderChangelog(CHANGELOG, style(false), null)).not.toContain('\x1b[');
    expect(renderChangelog(CHANGELOG, style(true), null)).toContain('\x1b[31m\x1b[1mBREAKING');
  });
});
