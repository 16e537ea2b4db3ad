import { describe, expect, it } from 'vitest';
import { parsePrefer, renderPrefer, renderPreferenceApplied } from '../../src/grammar/prefer.js';

describe('parsePrefer', () => {
  it('reads comma lists and repeated headers, trimming tokens', () => {
    expect(parsePrefer(['return=representation ,  count=exact', 'resolution=merge-duplicates', ' missing=default'])).toStrictEqual({
      return: 'representation', count: 'exact', resolution: 'merge-duplicates', missing: 'default', invalid: [],
    });
  });

  it('lets the first occurrence of each kind win', () => {
    expect(parsePrefer('return=minimal, return=representation, count=planned, count=exact')).toStrictEqual({
      return: 'minimal', count: 'planned', invalid: [],
    });
  });

  it('recognises every preference value', () => {
    expect(parsePrefer('return=headers-only, resolution=ignore-duplicates, count=estimated, missing=null, handling=strict, tx=rollback, params=single-object, timezone=America/Los_Angeles, max-affected=10'))
      .toStrictEqual({
        return: 'headers-only', resolution: 'ignore-duplicates', count: 'estimated', missing: 'null', handling: 'strict', tx: 'rollback',
        params: 'single-object', timezone: 'America/Los_Angeles', maxAffected: 10, invalid: [],
      });
  });

  it('treats count=none and return=none as our recognised extensions', () => {
    expect(parsePrefer('count=none, return=none')).toStrictEqual({ count: 'none', return: 'none', invalid: [] });
  });

  it('collects invalid tokens in order (for PGRST122)', () => {
    expect(parsePrefer(['handling=strict, foo', 'bar=1, return=everything, count, timezone=not a zone, max-affected=ten, tx=maybe'])).toStrictEqual({
      handling: 'strict',
      invalid: ['foo', 'bar=1', 'return=everything', 'count', 'timezone=not a zone', 'max-affected=ten', 'tx=maybe'],
    });
  });

  it('is case-sensitive like PostgREST and never throws', () => {
    expect(parsePrefer('Return=Minimal').invalid).toStrictEqual(['Return=Minimal']);
    expect(parsePrefer(null)).toStrictEqual({ invalid: [] });
    expect(parsePrefer(undefined)).toStrictEqual({ invalid: [] });
    expect(parsePrefer(',, ,')).toStrictEqual({ invalid: [] });
  });

  it('accepts IANA-looking time zones and leaves existence to the server', () => {
    expect(parsePrefer('timezone=UTC').timezone).toBe('UTC');
    expect(parsePrefer('timezone=Etc/GMT+5').timezone).toBe('Etc/GMT+5');
    expect(parsePrefer('timezone=Mars/Olympus_Mons').timezone).toBe('Mars/Olympus_Mons');
    expect(parsePrefer('timezone=').invalid).toStrictEqual(['timezone=']);
  });
});

describe('renderPrefer / renderPreferenceApplied', () => {
  it('renders the request header', () => {
    expect(renderPrefer({ count: 'exact', return: 'representation', maxAffected: 5, handling: 'strict' }))
      .toBe('return=representation, count=exact, handling=strict, max-affected=5');
    expect(renderPrefer({})).toBe('');
  });

  it('renders Preference-Applied in PostgREST order, null when empty', () => {
    expect(renderPreferenceApplied({
      maxAffected: 10, handling: 'strict', timezone: 'UTC', tx: 'rollback', count: 'exact', params: 'single-object', return: 'minimal', missing: 'default', resolution: 'merge-duplicates',
    })).toBe('resolution=merge-duplicates, missing=default, return=minimal, params=single-object, count=exact, tx=rollback, handling=strict, timezone=UTC, max-affected=10');
    expect(renderPreferenceApplied({ invalid: ['x'] })).toBeNull();
    expect(renderPreferenceApplied({})).toBeNull();
  });

  it('round-trips through parsePrefer', () => {
    const p = { return: 'representation', count: 'exact', missing: 'null', timezone: 'Europe/Paris', maxAffected: 3 } as const;
    expect(parsePrefer(renderPrefer(p))).toStrictEqual({ ...p, invalid: [] });
  });
});
