import { describe, expect, it } from 'vitest';
import { ProxySettingError } from '../../src/client/errors.js';
import { maskPassword, parseProxy, proxyAuthorization, proxyFor, redact } from '../../src/client/proxy.js';

const via = (url: string, env: Record<string, string | undefined>) => proxyFor(new URL(url), env)?.href ?? null;

describe('proxyFor: the environment as curl reads it', () => {
  it.each([
    // [target, env, proxy or null]
    ['http://api.example.com', { http_proxy: 'http://p:3128' }, 'http://p:3128/'],
    ['http://api.example.com', { HTTP_PROXY: 'http://p:3128' }, 'http://p:3128/'],
    ['http://api.example.com', { http_proxy: 'http://lower:1', HTTP_PROXY: 'http://upper:2' }, 'http://lower:1/'],
    ['http://api.example.com', { HTTP_PROXY: 'http://p:3128', REQUEST_METHOD: 'GET' }, null], // httpoxy: CGI
    ['http://api.example.com', { https_proxy: 'http://p:3128' }, null], // the other scheme's proxy
    ['https://api.example.com', { HTTPS_PROXY: 'http://p:3128' }, 'http://p:3128/'],
    ['https://api.example.com', { https_proxy: 'http://lower:1', HTTPS_PROXY: 'http://upper:2' }, 'http://lower:1/'],
    ['https://api.example.com', { http_proxy: 'http://p:3128' }, null],
    ['https://api.example.com', { ALL_PROXY: 'http://all:9' }, 'http://all:9/'],
    ['https://api.example.com', { https_proxy: 'http://s:1', all_proxy: 'http://all:9' }, 'http://s:1/'],
    ['https://api.example.com', { HTTPS_PROXY: '' }, null], // empty is unset
    ['https://api.example.com', { HTTPS_PROXY: 'proxy.corp' }, 'http://proxy.corp:1080/'], // no scheme, curl's default port
    ['https://api.example.com', { HTTPS_PROXY: 'https://proxy.corp' }, 'https://proxy.corp/'], // port 443
    ['https://api.example.com', { HTTPS_PROXY: 'http://proxy.corp:80' }, 'http://proxy.corp/'], // 80 as written, not 1080
    ['https://api.example.com', { HTTPS_PROXY: 'http://u:p@[::2]' }, 'http://u:p@[::2]:1080/'],
  ])('%s with %j → %s', (target, env, expected) => {
    expect(via(target, env)).toBe(expected);
  });

  it.each([
    ['*', 'https://api.example.com', null],
    ['example.com', 'https://api.example.com', null], // a subdomain
    ['example.com', 'https://example.com', null],
    ['.example.com', 'https://example.com', null], // a leading dot is ignored
    ['example.com', 'https://notexample.com', 'http://p:3128/'], // not a suffix at a dot
    ['EXAMPLE.com:8443', 'https://api.example.com:8443', null], // case ignored, the port matches
    // issue 38 item 7: as curl and undici read it
    ['example.com:8443', 'https://api.example.com', 'http://p:3128/'], // another port (443): through the proxy
    ['*.example.com', 'https://api.example.com', null], // Go's and undici's wildcard
    ['*.example.com', 'https://example.com', null], // as a leading dot: the domain too, as curl
    ['*.example.com', 'https://api.example.org', 'http://p:3128/'],
    ['.example.com:443', 'https://a.b.example.com', null], // the scheme's default port
    ['192.168.1.5:8080', 'https://192.168.1.5:8080', null],
    ['192.168.1.5:8080', 'https://192.168.1.5:9090', 'http://p:3128/'],
    ['[2001:db8::1]:8443', 'https://[2001:db8::1]:8443', null],
    ['[2001:db8::1]:8443', 'https://[2001:db8::1]', 'http://p:3128/'],
    ['other.org *.example.com', 'https://x.example.com', null], // spaces separate too
    ['10.0.0.0/8', 'https://10.2.3.4', null],
    ['10.0.0.0/8', 'https://11.2.3.4', 'http://p:3128/'],
    ['192.168.1.5', 'https://192.168.1.5:8080', null],
    ['2001:db8::/32', 'https://[2001:db8::1]', null],
    ['[2001:db8::1]', 'https://[2001:db8::1]', null],
    ['other.org, example.com ,x', 'https://api.example.com', null],
    ['', 'https://api.example.com', 'http://p:3128/'],
  ])('NO_PROXY=%j for %s → %s', (noProxy, target, expected) => {
    expect(via(target, { HTTPS_PROXY: 'http://p:3128', NO_PROXY: noProxy })).toBe(expected);
    expect(via(target, { HTTPS_PROXY: 'http://p:3128', no_proxy: noProxy })).toBe(expected);
  });

  it.each(['http://localhost:3000', 'http://127.0.0.1:3000', 'http://127.1.2.3', 'http://[::1]:3000', 'http://app.localhost'])(
    'reaches loopback %s directly even with a proxy set (the embedded catalog lives there)',
    (target) => {
      expect(via(target, { HTTP_PROXY: 'http://p:3128', ALL_PROXY: 'http://p:3128' })).toBeNull();
    },
  );

  it('refuses what it cannot use, naming it', () => {
    expect(() => proxyFor(new URL('https://a.example'), { HTTPS_PROXY: 'socks5://p:1080' })).toThrow(ProxySettingError);
    expect(() => proxyFor(new URL('https://a.example'), { HTTPS_PROXY: 'socks5://p:1080' })).toThrow(/socks5/);
    expect(() => parseProxy('http://[bad')).toThrow(/is not a URL/);
  });

  it('never shows the password of a proxy setting that is not a URL (issue 38 item 6)', () => {
    for (const raw of ['http://ana:s3cr@t@[bad:3128', 'ana:s3cret@proxy:port', 'http://ana:s3cret@proxy:99999']) {
      let message = '';
      try {
        parseProxy(raw);
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message, raw).toMatch(/is not a URL/);
      expect(message, raw).not.toMatch(/s3cr/);
      expect(message).toContain('ana:***@');
    }
    expect(maskPassword('http://proxy.corp:3128')).toBe('http://proxy.corp:3128');
  });

  it('sends credentials from the URL, percent-decoded, and never shows the password', () => {
    const p = parseProxy('http://ana:p%40ss@proxy:3128');
    expect(proxyAuthorization(p)).toEqual({ 'proxy-authorization': `Basic ${Buffer.from('ana:p@ss').toString('base64')}` });
    expect(redact(p)).toBe('http://ana:***@proxy:3128');
    expect(proxyAuthorization(parseProxy('http://proxy:3128'))).toEqual({});
  });
});
