import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseHeader, readConfigFile, resolveConfig, type ConfigFile } from '../../src/cli/config.js';
import { UsageError } from '../../src/cli/errors.js';
import { resolvePaths } from '../../src/cli/paths.js';
import { tempDir } from '../support/stores.js';
import { runCli } from './support.js';

const file: ConfigFile = {
  default_profile: 'staging',
  profiles: {
    staging: { url: 'https://staging.example.com', token: 'profile-token', headers: { apikey: 'profile-key', 'X-Team': 'anr' }, output: 'csv' },
    prod: { url: 'https://prod.example.com' },
  },
};
const base = { configFile: '/cfg/config.yaml' };

describe('configuration precedence: flag > environment > profile > default', () => {
  it('takes the profile when nothing else is given', () => {
    const c = resolveConfig({ ...base, flags: {}, env: {}, file });
    expect(c.profile).toEqual({ value: 'staging', source: 'profile' });
    expect(c.url).toEqual({ value: 'https://staging.example.com', source: 'profile' });
    expect(c.token).toEqual({ value: 'profile-token', source: 'profile' });
    expect(c.output).toEqual({ value: 'csv', source: 'profile' });
  });

  it('lets the environment beat the profile and flags beat both', () => {
    const env = { CATALOG_URL: 'http://env', CATALOG_TOKEN: 'env-token', CATALOG_OUTPUT: 'yaml' };
    const c = resolveConfig({ ...base, flags: {}, env, file });
    expect([c.url?.source, c.token?.source, c.output?.value]).toEqual(['env', 'env', 'yaml']);
    const f = resolveConfig({ ...base, flags: { url: 'http://flag', token: 'flag-token', output: 'json' }, env, file });
    expect([f.url, f.token?.value, f.output?.value]).toEqual([{ value: 'http://flag', source: 'flag' }, 'flag-token', 'json']);
  });

  it('chooses the profile by flag, then CATALOG_PROFILE, then default_profile', () => {
    expect(resolveConfig({ ...base, flags: {}, env: { CATALOG_PROFILE: 'prod' }, file }).url?.value).toBe('https://prod.example.com');
    expect(resolveConfig({ ...base, flags: { profile: 'staging' }, env: { CATALOG_PROFILE: 'prod' }, file }).url?.value).toBe('https://staging.example.com');
  });

  it('merges headers by name, flags replacing the profile', () => {
    const c = resolveConfig({ ...base, flags: { header: ['apikey: flag-key', 'X-Other:1'] }, env: {}, file });
    expect(c.headers).toEqual([
      { name: 'apikey', value: 'flag-key', source: 'flag' },
      { name: 'X-Team', value: 'anr', source: 'profile' },
      { name: 'X-Other', value: '1', source: 'flag' },
    ]);
  });

  it('means the embedded catalog when no URL is set anywhere', () => {
    const c = resolveConfig({ ...base, flags: {}, env: {}, file: null });
    expect(c.url).toBeNull();
    expect(c.profile).toBeNull();
  });

  it('names the profiles when an unknown one is asked for, and rejects unknown formats', () => {
    expect(() => resolveConfig({ ...base, flags: { profile: 'qa' }, env: {}, file })).toThrow(UsageError);
    try {
      resolveConfig({ ...base, flags: { profile: 'qa' }, env: {}, file });
    } catch (err) {
      expect((err as UsageError).hint).toBe('profiles: staging, prod');
    }
    expect(() => resolveConfig({ ...base, flags: { output: 'xml' }, env: {}, file: null })).toThrow(/unknown output format 'xml'/);
  });

  it('parses NAME:VALUE headers and rejects anything else', () => {
    expect(parseHeader('apikey: abc:def')).toEqual(['apikey', 'abc:def']);
    expect(() => parseHeader('no colon')).toThrow(UsageError);
    expect(() => parseHeader(':x')).toThrow(UsageError);
  });
});

describe('files and paths', () => {
  it('reads config.yaml, and reports a broken one', async () => {
    const dir = tempDir('cfg-');
    const path = join(dir, 'config.yaml');
    writeFileSync(path, 'profiles:\n  a:\n    url: http://a\n');
    expect(await readConfigFile(path)).toEqual({ profiles: { a: { url: 'http://a' } } });
    expect(await readConfigFile(join(dir, 'missing.yaml'))).toBeNull();
    writeFileSync(path, 'profiles: [unclosed');
    await expect(readConfigFile(path)).rejects.toThrow(UsageError);
  });

  it('follows XDG, with CATALOG_DATA for the embedded catalog', () => {
    expect(resolvePaths({}, '/home/u')).toEqual({
      configFile: '/home/u/.config/catalog/config.yaml',
      cacheDir: '/home/u/.cache/catalog',
      dataDir: '/home/u/.local/share/catalog',
    });
    const p = resolvePaths({ XDG_CONFIG_HOME: '/x/c', XDG_CACHE_HOME: '/x/k', XDG_DATA_HOME: '/x/d', CATALOG_DATA: '/data' }, '/home/u');
    expect(p).toEqual({ configFile: '/x/c/catalog/config.yaml', cacheDir: '/x/k/catalog', dataDir: '/data' });
  });
});

describe('catalog config', () => {
  it('shows each effective setting with its source and never a token', async () => {
    const home = tempDir('cfgcmd-');
    mkdirSync(join(home, 'catalog'), { recursive: true });
    writeFileSync(join(home, 'catalog', 'config.yaml'), 'profiles:\n  s:\n    url: https://s.example.com\n    token: sekrit-token-value\n    headers: { apikey: sekrit-key }\n');
    const r = await runCli(['--profile', 's', 'config', '-o', 'json'], { env: { XDG_CONFIG_HOME: home } });
    expect(r.code).toBe(0);
    const rows = JSON.parse(r.out) as Array<{ setting: string; value: string; source: string }>;
    const get = (s: string) => rows.find((x) => x.setting === s);
    expect(get('url')).toEqual({ setting: 'url', value: 'https://s.example.com', source: 'profile' });
    expect(get('token')?.value).toBe('<redacted, 18 characters>');
    expect(get('header apikey')?.value).toBe('<redacted>');
    expect(get('output')).toEqual({ setting: 'output', value: 'json', source: 'flag' });
    expect(r.out).not.toContain('sekrit');
  });
});
