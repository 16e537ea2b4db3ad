import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { removedFieldMessage, versionWarning, versionWarningsFile } from '../../src/cli/version-check.js';
import { tempDir } from '../support/stores.js';
import { runCli } from './support.js';

describe('the version warning', () => {
  it('warns once per URL and version, remembering it in the cache directory', () => {
    const cacheDir = tempDir('cache-');
    const first = versionWarning({ url: 'https://catalog.example.com/', version: '12.3.0', cacheDir });
    expect(first).toBe('the service at https://catalog.example.com reports interface version 12.3.0; this tool was built for 12.2.3, so fields may differ. See what changed: catalog changelog');
    expect(existsSync(versionWarningsFile(cacheDir))).toBe(true);
    expect(versionWarning({ url: 'https://catalog.example.com', version: '12.3.0', cacheDir })).toBeNull();
    expect(versionWarning({ url: 'https://other.example.com', version: '12.3.0', cacheDir })).toContain('other.example.com');
    expect(versionWarning({ url: 'https://catalog.example.com', version: '12.4.0', cacheDir })).toContain('12.4.0');
  });

  it('stays quiet for the version the tool was built for, or an unknown one', () => {
    const cacheDir = tempDir('cache-');
    expect(versionWarning({ url: 'http://x', version: '12.2.3', cacheDir })).toBeNull();
    expect(versionWarning({ url: 'http://x', version: null, cacheDir })).toBeNull();
    expect(existsSync(versionWarningsFile(cacheDir))).toBe(false);
  });
});

describe('removed fields', () => {
  it('names the version that removed a field', () => {
    expect(removedFieldMessage('artists', 'slug')).toBe("the field 'slug' was removed from artists in interface 12.2.3 (see: catalog changelog)");
    expect(removedFieldMessage('releases', 'slug')).toBeNull();
    expect(removedFieldMessage('artists', 'stage_name')).toBeNull();
  });

  it('flag validation says slug was removed (with the version and the changelog) instead of "unknown field"', async () => {
    // --dry-run with the embedded catalog: the built-in schema, nothing opened or sent.
    for (const args of [['artists', 'list', '--where', 'slug=x'], ['artists', 'add', 'slug=x'], ['artists', 'list', '--select', 'id,slug']]) {
      const r = await runCli(['--dry-run', ...args]);
      expect(r.code).toBe(2);
      expect(r.err).toContain("error: the field 'slug' was removed from artists in interface 12.2.3 (see: catalog changelog)");
      expect(r.err).not.toContain('unknown field');
    }
  });
});
