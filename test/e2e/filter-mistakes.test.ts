import { describe, expect, it } from 'vitest';
import { tempDir } from '../support/stores.js';
import { catalog, ensureBuilt } from './support.js';

ensureBuilt();

/** Mistakes in --where must not look like answers: each exits 2 with a did-you-mean instead of an empty list. */
describe('operator typos in --where / --or', () => {
  const env = { CATALOG_DATA: tempDir('typos-') };

  it.each([
    ['genre=eqq.House', /unknown operator 'eqq'/, /did you mean genre=eq\.House\?/],
    ['genre=ilke.*house*', /unknown operator 'ilke'/, /did you mean genre=like\.\*house\* or genre=ilike\.\*house\*\?/],
    ['genre=in.(House,Techno', /the in operator's value does not parse/, /field=op\.value/],
    ['genre==House', /'==' is not an operator/, /write genre=House \(or genre=eq\.House\)/],
    ['genre=not.eqq.House', /unknown operator 'eqq'/, /genre=not\.eq\.House/],
  ])('%s exits 2 with a did-you-mean, sending nothing', async (expr, message, hint) => {
    for (const flag of ['--where', '--or']) {
      const r = await catalog(['releases', 'list', flag, expr], { env });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).toMatch(hint);
      expect(r.stdout).toBe('');
    }
  });

  it.each([
    ['release_title=Mr. Brown', 'release_title=eq.Mr.%20Brown'],
    ['release_version=1.2', 'release_version=eq.1.2'],
    ['genre=in.(House,Techno)', 'genre=in.(House,Techno)'],
    ['genre=House', 'genre=eq.House'],
  ])('values that merely contain dots keep working: %s', async (expr, sent) => {
    const r = await catalog(['--dry-run', 'releases', 'list', '--where', expr], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(sent);
  });
});
