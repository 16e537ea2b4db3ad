import { describe, expect, it } from 'vitest';
import { isLoopbackHost, newHolderKey, privateRefusal, withoutCors } from '../../src/holder/guard.js';

const key = newHolderKey();
const ok = { host: '127.0.0.1:4000', 'catalog-holder-key': key };

describe("a private holder's door (src/holder/guard.ts)", () => {
  it.each([
    ['localhost', true],
    ['localhost:3000', true],
    ['127.0.0.1', true],
    ['127.1.2.3:80', true],
    ['[::1]', true],
    ['[::1]:8080', true],
    ['LOCALHOST:1', true],
    [undefined, false],
    ['', false],
    ['evil.example', false],
    ['127.0.0.1.evil.example', false],
    ['localhost.evil.example', false],
    ['a b', false],
    ['[::1', false],
    ['0.0.0.0:80', false],
    ['10.0.0.1', false],
    ['::1', false],
  ])('Host %s is loopback: %s', (host, expected) => {
    expect(isLoopbackHost(host)).toBe(expected);
  });

  it('makes a new 256-bit key each time', () => {
    expect(key).toMatch(/^[\w-]{43}$/);
    expect(newHolderKey()).not.toBe(key);
  });

  it.each([
    ['a foreign Host, key or not', { method: 'GET', headers: { ...ok, host: 'evil.example' } }, 400],
    ['no key', { method: 'GET', headers: { host: 'localhost' } }, 401],
    ['a key one character short', { method: 'GET', headers: { ...ok, 'catalog-holder-key': key.slice(1) } }, 401],
    ['the key as a bearer token instead', { method: 'GET', headers: { host: 'localhost', authorization: `Bearer ${key}` } }, 401],
    ['a form POST', { method: 'POST', headers: { ...ok, 'content-type': 'application/x-www-form-urlencoded' } }, 415],
    ['a text/plain POST', { method: 'POST', headers: { ...ok, 'content-type': 'text/plain;charset=UTF-8' } }, 415],
    ['a POST without Content-Type', { method: 'POST', headers: { ...ok, 'content-length': '2' } }, 415],
    ['a PATCH of text/csv', { method: 'PATCH', headers: { ...ok, 'content-type': 'text/csv' } }, 415],
    ['a DELETE with a form body', { method: 'DELETE', headers: { ...ok, 'content-type': 'application/x-www-form-urlencoded', 'content-length': '3' } }, 415],
  ])('refuses %s', (_what, req, status) => {
    expect(privateRefusal(req, key)?.status).toBe(status);
  });

  it.each([
    ['a read', { method: 'GET', headers: ok }],
    ['a JSON write', { method: 'POST', headers: { ...ok, 'content-type': 'application/json; charset=utf-8' } }],
    ['a COPY body', { method: 'POST', headers: { ...ok, 'content-type': 'application/vnd.catalog.copy+csv' } }],
    ['a DELETE without a body', { method: 'DELETE', headers: ok }],
  ])('lets %s through', (_what, req) => {
    expect(privateRefusal(req, key)).toBeNull();
  });

  it('takes every Access-Control-* header off an answer', () => {
    expect(withoutCors({ 'access-control-allow-origin': '*', 'Access-Control-Expose-Headers': 'x', 'content-type': 'application/json' })).toEqual({ 'content-type': 'application/json' });
  });
});
