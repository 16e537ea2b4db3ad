import { describe, expect, it } from 'vitest';
import { ProxySettingError } from '../../src/client/errors.js';
import { parseProxy, proxyAuthorization, proxyFor, redact } from '../../src/client/proxy.js';

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
    ['EXAMPLE.com:8443', 'https://api.example.com:443', null], // case and port ignored
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

  it('sends credentials from the URL, percent-decoded, and never shows the password', () => {
    const p = parseProxy('http://ana:p%40ss@proxy:3128');
    expect(proxyAuthorization(p)).toEqual({ 'proxy-authorization': `Basic ${Buffer.from('ana:p@ss').toString('base64')}` });
    expect(redact(p)).toBe('http://ana:***@proxy:3128');
    expect(proxyAuthorization(parseProxy('http://proxy:3128'))).toEqual({});
  });
});
