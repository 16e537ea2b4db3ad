import { describe, expect, it } from 'vitest';
import { proxyFor } from '../../src/client/proxy.js';
import { isLoopbackHost } from '../../src/holder/guard.js';
import { isLoopback } from '../../src/server/listen.js';
import { hostOfHeader, isLoopbackName } from '../../src/shared/loopback.js';

describe('src/shared/loopback.ts: the one loopback rule', () => {
  it.each([
    ['localhost', true],
    ['::1', true],
    ['127.0.0.1', true],
    ['127.1.2.3', true],
    ['127.255.255.255', true],
    ['[::1]', false], // a name as it is: brackets are the header parser's business
    ['LOCALHOST', false], // no case folding here
    ['localhost.', false],
    ['app.localhost', false], // only with { subdomains: true }
    ['127.0.0.1.evil.com', false],
    ['localhost.evil', false],
    ['evil-localhost', false],
    ['0x7f.1', false],
    ['0x7f.0.0.1', false],
    ['127.1', false],
    ['127.000.0.1', false],
    ['127.0.0.256', false],
    ['127.0.0.1:80', false],
    [' 127.0.0.1', false],
    ['0.0.0.0', false],
    ['128.0.0.1', false],
    ['::ffff:127.0.0.1', false],
    ['0:0:0:0:0:0:0:1', false],
    ['', false],
  ])('isLoopbackName(%j) is %s', (name, expected) => {
    expect(isLoopbackName(name)).toBe(expected);
  });

  it.each([
    ['app.localhost', true],
    ['a.b.localhost', true],
    ['localhost', true],
    ['localhost.evil', false],
    ['evil-localhost', false],
    ['localhost.com', false],
  ])('isLoopbackName(%j, { subdomains: true }) is %s', (name, expected) => {
    expect(isLoopbackName(name, { subdomains: true })).toBe(expected);
  });

  it.each([
    ['localhost', 'localhost'],
    [' LocalHost:3000 ', 'localhost'],
    ['127.0.0.1:65535', '127.0.0.1'],
    ['[::1]', '::1'],
    ['[::1]:8080', '::1'],
    ['example.com:443', 'example.com'],
    ['::1', null], // an IPv6 address in a Host header has brackets
    ['[::1', null],
    ['::1]', null],
    ['127.0.0.1:123456', null], // a port has at most five digits
    ['127.0.0.1:', null],
    ['127.0.0.1:80:80', null],
    ['[localhost]', null],
    ['', null],
    [undefined, null],
  ])('hostOfHeader(%j) is %j', (value, expected) => {
    expect(hostOfHeader(value)).toBe(expected);
  });
});

/** What each caller takes, pinned: none may take more than it did before the rule was shared. */
describe('each caller of the loopback rule', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.9.8.7', true],
    ['localhost', true],
    ['::1', true],
    ['[::1]', true], // as well as ::1
    ['LOCALHOST', false], // as given: no case folding
    ['localhost:3000', false], // an address, no port
    ['app.localhost', false],
    ['127.0.0.1.evil.com', false],
    ['localhost.evil', false],
    ['0x7f.1', false],
    ['127.1', false],
    ['[127.0.0.1]', false],
    ['127.0.0.1111', false], // taken before sharing (any digits): tightened
    ['0.0.0.0', false],
    ['::', false],
  ])('listen address %j counts as loopback (no authentication needed): %s', (host, expected) => {
    expect(isLoopback(host)).toBe(expected);
  });

  it.each([
    ['localhost', true],
    ['localhost:3000', true],
    ['LOCALHOST:1', true],
    ['127.0.0.1', true],
    ['127.1.2.3:80', true],
    ['[::1]', true],
    ['[::1]:8080', true],
    [' 127.0.0.1:4000 ', true],
    ['::1', false],
    ['app.localhost', false],
    ['localhost.', false],
    ['127.0.0.1.evil.com', false],
    ['127.0.0.1.evil.com:80', false],
    ['localhost.evil', false],
    ['0x7f.1', false],
    ['127.1:80', false],
    ['127.0.0.999', false], // taken before sharing (1–3 digits): tightened
    ['127.000.0.1', false], // likewise
    ['[::ffff:127.0.0.1]', false],
    ['0.0.0.0:80', false],
    [undefined, false],
  ])('private holder: Host %j is loopback: %s', (host, expected) => {
    expect(isLoopbackHost(host)).toBe(expected);
  });

  const env = { http_proxy: 'http://proxy.corp:3128', https_proxy: 'http://proxy.corp:3128' };
  it.each([
    ['http://localhost:3000/', true],
    ['http://LOCALHOST/', true], // a URL's host is lowercased
    ['http://localhost./', true], // the trailing dot is dropped
    ['http://app.localhost/', true], // *.localhost: only this caller
    ['http://127.0.0.1/', true],
    ['https://127.200.0.1:8443/', true],
    ['http://[::1]:3000/', true],
    ['http://0x7f.1/', true], // the URL parser makes it 127.0.0.1, where the connection goes
    ['http://127.1/', true], // likewise
    ['http://127.0.0.1.evil.com/', false],
    ['http://localhost.evil/', false],
    ['http://evil-localhost/', false],
    ['http://[::ffff:127.0.0.1]/', false],
    ['http://10.0.0.1/', false],
  ])('proxy: %s goes direct (not through the proxy): %s', (url, direct) => {
    expect(proxyFor(new URL(url), env) === null).toBe(direct);
  });
});
