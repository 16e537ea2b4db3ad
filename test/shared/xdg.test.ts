import { homedir } from 'node:os';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolvePaths } from '../../src/cli/paths.js';
import { templateCachePath } from '../../src/store/pglite.js';
import { catalogCacheDir, xdgBase } from '../../src/shared/xdg.js';

describe('src/shared/xdg.ts: the one XDG rule', () => {
  it.each([
    ['cache', {}, '/home/u/.cache'],
    ['cache', { XDG_CACHE_HOME: '/x/k' }, '/x/k'],
    ['cache', { XDG_CACHE_HOME: '' }, '/home/u/.cache'],
    ['cache', { XDG_CACHE_HOME: 'relative/k' }, '/home/u/.cache'],
    ['cache', { XDG_CACHE_HOME: '~/k' }, '/home/u/.cache'],
    ['cache', { XDG_CACHE_HOME: './k' }, '/home/u/.cache'],
    ['config', { XDG_CONFIG_HOME: '/x/c' }, '/x/c'],
    ['config', { XDG_CONFIG_HOME: 'c' }, '/home/u/.config'],
    ['data', {}, '/home/u/.local/share'],
    ['data', { XDG_DATA_HOME: '/x/d', XDG_CACHE_HOME: '/x/k' }, '/x/d'],
    ['data', { XDG_DATA_HOME: 'd' }, '/home/u/.local/share'],
  ] as const)('%s with %j → %s', (kind, env, expected) => {
    expect(xdgBase(kind, env, '/home/u')).toBe(expected);
  });

  it('asks for the home directory only when the variable does not decide', () => {
    const nowhere = () => {
      throw new Error('no home');
    };
    expect(catalogCacheDir({ XDG_CACHE_HOME: '/x/k' }, nowhere)).toBe('/x/k/catalog');
    expect(() => catalogCacheDir({ XDG_CACHE_HOME: 'k' }, nowhere)).toThrow('no home');
  });

  it('a relative XDG_CACHE_HOME is ignored by the CLI and by the store alike', () => {
    const env = { XDG_CACHE_HOME: 'relative/cache' };
    expect(resolvePaths(env, homedir()).cacheDir).toBe(join(homedir(), '.cache', 'catalog'));
    const template = templateCachePath(env);
    expect(template).toBe(join(homedir(), '.cache', 'catalog', basename(template)));
    // an absolute one is taken by both
    const absolute = { XDG_CACHE_HOME: '/x/k' };
    expect(resolvePaths(absolute, '/home/u').cacheDir).toBe('/x/k/catalog');
    expect(templateCachePath(absolute)).toBe(join('/x/k/catalog', basename(template)));
  });
});
