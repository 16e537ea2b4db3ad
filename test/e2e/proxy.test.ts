import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestProxy, startTlsFront, type TestProxy } from '../support/proxy.js';
import { tempDir } from '../support/stores.js';
import { catalog, ensureBuilt, type Serve, startServe } from './support.js';

// A real `catalog serve` on loopback, a real forward proxy started by the test on loopback
// (test/support/proxy.ts), and a TLS front for https. The service is addressed as catalog.test,
// a name only the proxy resolves: a command that did not go through the proxy fails with ENOTFOUND.
const NAME = 'catalog.test';
const NO_PROXY_ENV = { HTTP_PROXY: undefined, http_proxy: undefined, HTTPS_PROXY: undefined, https_proxy: undefined, ALL_PROXY: undefined, all_proxy: undefined, NO_PROXY: undefined, no_proxy: undefined };

describe('the CLI through HTTP_PROXY / HTTPS_PROXY / NO_PROXY', () => {
  let serve: Serve;
  let port = 0;
  let proxy: TestProxy;
  let guarded: TestProxy;
  let tls: Awaited<ReturnType<typeof startTlsFront>>;
  const run = (args: string[], env: Record<string, string | undefined>) => catalog(args, { env: { ...NO_PROXY_ENV, ...env } });

  beforeAll(async () => {
    ensureBuilt();
    serve = await startServe(['--data', tempDir('proxy-data-')]);
    port = Number(new URL(serve.url).port);
    proxy = await startTestProxy({ [NAME]: '127.0.0.1' });
    guarded = await startTestProxy({ [NAME]: '127.0.0.1' }, 'ana:p@ss');
    tls = await startTlsFront(NAME, tempDir('proxy-tls-'), port);
  });

  afterAll(async () => {
    await Promise.all([proxy?.close(), guarded?.close(), tls?.close(), serve?.stop()]);
  });

  it('sends http:// requests through HTTP_PROXY with the absolute URL, writes and reads included', async () => {
    const url = `http://${NAME}:${port}`;
    const added = await run(['--url', url, 'labels', 'add', 'name=Proxied Label', '-o', 'json'], { HTTP_PROXY: proxy.url });
    expect(added.stderr).toBe('');
    expect(added.code).toBe(0);
    const listed = await run(['--url', url, 'labels', 'list', '--where', 'name=Proxied Label', '-o', 'json', '-v'], { HTTP_PROXY: proxy.url });
    expect(listed.code).toBe(0);
    expect((JSON.parse(listed.stdout) as Array<{ name: string }>).map((l) => l.name)).toEqual(['Proxied Label']);
    expect(listed.stderr).toContain(`through ${proxy.url}`);
    // add sends a client-made id with on_conflict=id (a resend cannot double the row), so the query varies
    expect(proxy.seen.some((s) => s.startsWith(`POST ${url}/labels?`) || s === `POST ${url}/labels`)).toBe(true);
    expect(proxy.seen.some((s) => s.startsWith(`GET ${url}/labels?`))).toBe(true);
  });

  it('prefers lowercase http_proxy to HTTP_PROXY, as curl does', async () => {
    const before = proxy.seen.length;
    const r = await run(['--url', `http://${NAME}:${port}`, 'labels', 'count'], { http_proxy: proxy.url, HTTP_PROXY: 'http://127.0.0.1:1' });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(proxy.seen.length).toBeGreaterThan(before);
  });

  it('goes direct for a host NO_PROXY names (here: unresolvable, so ENOTFOUND), never asking the proxy', async () => {
    const before = proxy.seen.length;
    const r = await run(['--url', `http://${NAME}:${port}`, 'labels', 'count', '--timeout', '5'], { HTTP_PROXY: proxy.url, NO_PROXY: `example.org, .${NAME}` });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/ENOTFOUND|EAI_AGAIN/);
    expect(proxy.seen.length).toBe(before);
  });

  it('tunnels https:// through HTTPS_PROXY with CONNECT: the proxy sees only the host and port', async (ctx) => {
    if (!tls) {
      console.warn('\n[catalog] SKIPPED the HTTPS-through-a-proxy test: openssl is not installed to make a certificate.\n');
      ctx.skip();
      return;
    }
    // a label of its own, added straight to the service (no proxy): the one the tunnelled read must find
    const added = await run(['--url', serve.url, 'labels', 'add', 'name=Tunnelled Label'], {});
    expect(added.code, added.stderr).toBe(0);
    const url = `https://${NAME}:${tls.port}`;
    const before = proxy.seen.length;
    const r = await run(['--url', url, 'labels', 'list', '--where', 'name=Tunnelled Label', '-o', 'json'], { HTTPS_PROXY: proxy.url, NODE_EXTRA_CA_CERTS: tls.cert });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as Array<{ name: string }>).map((l) => l.name)).toEqual(['Tunnelled Label']);
    const seen = proxy.seen.slice(before);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.filter((s) => s !== `CONNECT ${NAME}:${tls?.port}`)).toEqual([]);
  });

  it('sends proxy credentials from the URL (percent-decoded); a 407 is reported once, not retried, the password not shown', async () => {
    const url = `http://${NAME}:${port}`;
    const ok = await run(['--url', url, 'labels', 'count'], { HTTP_PROXY: guarded.url.replace('//', '//ana:p%40ss@') });
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);

    const before = guarded.seen.length;
    const refused = await run(['--url', url, 'labels', 'count'], { HTTP_PROXY: guarded.url.replace('//', '//ana:wrong@') });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('through the proxy http://ana:***@127.0.0.1');
    expect(refused.stderr).toContain('407');
    expect(refused.stderr).not.toContain('wrong');
    const asked = guarded.seen.slice(before);
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatch(new RegExp(`^[A-Z]+ ${url}/\\S* \\(407\\)$`));
  });

  it('a refused CONNECT tunnel is reported once, naming the proxy', async (ctx) => {
    if (!tls) return ctx.skip();
    const before = guarded.seen.length;
    const r = await run(['--url', `https://${NAME}:${tls.port}`, 'labels', 'count'], { HTTPS_PROXY: guarded.url, NODE_EXTRA_CA_CERTS: tls.cert });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`the proxy ${guarded.url} refused a tunnel to ${NAME}:${tls.port}: 407`);
    expect(guarded.seen.slice(before)).toEqual([`CONNECT ${NAME}:${tls.port} (407)`]);
  });

  it('refuses a proxy it cannot speak (SOCKS) with exit 2, naming the setting', async () => {
    const r = await run(['--url', `https://${NAME}:1`, 'labels', 'count'], { ALL_PROXY: 'socks5://127.0.0.1:1080' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('socks5');
    expect(r.stderr).toContain('HTTPS_PROXY');
  });
});
