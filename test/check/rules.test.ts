import { describe, expect, it } from 'vitest';
import { gtinValid, isrcState, nameKey, profileProblem, rowFindings, RULE_NAMES, todayOf, upcProblem, whitespaceProblem } from '../../src/check/rules.js';
import { qualityCheck } from '../../src/cli/import-check.js';

describe('check rules (issue 18)', () => {
  it('ISRC: valid as is, fixable when only separators and case are off, invalid otherwise', () => {
    expect(isrcState('USA1B2400001')).toEqual({ ok: true });
    expect(isrcState('us-a1b-24-00001')).toEqual({ ok: false, fix: 'USA1B2400001' });
    expect(isrcState('US A1B 24 00001')).toEqual({ ok: false, fix: 'USA1B2400001' });
    expect(isrcState('USA1B240000')).toEqual({ ok: false, fix: null });
    expect(isrcState('U1A1B2400001')).toEqual({ ok: false, fix: null });
  });

  it('UPC/EAN: the GTIN check digit, scientific notation, separators and a lost leading zero', () => {
    expect(gtinValid('036000291452')).toBe(true); // a UPC-A
    expect(gtinValid('4006381333931')).toBe(true); // an EAN-13
    expect(gtinValid('036000291453')).toBe(false);
    expect(upcProblem('036000291452')).toBeNull();
    expect(upcProblem('1.23457E+11')?.message).toMatch(/scientific notation/);
    expect(upcProblem('1.23457E+11')?.fix).toBeNull();
    expect(upcProblem('036000-291452')).toMatchObject({ fix: '036000291452' });
    expect(upcProblem('36000291452')).toMatchObject({ fix: '036000291452' });
    expect(upcProblem('036000291453')?.message).toMatch(/check digit/);
    expect(upcProblem('12345')?.message).toMatch(/not 12 or 13 digits/);
  });

  it('whitespace: edges, doubled spaces and control characters; line breaks are left alone', () => {
    expect(whitespaceProblem('name', '  Spaced Out Records  ')).toEqual({ message: expect.stringMatching(/leading and trailing/), fix: 'Spaced Out Records' });
    expect(whitespaceProblem('name', 'A  B')?.fix).toBe('A B');
    expect(whitespaceProblem('name', 'Bell\u0007')?.fix).toBe('Bell');
    expect(whitespaceProblem('name', 'Label\nWith Newline')).toBeNull();
    expect(whitespaceProblem('biography', 'Line one.\n\nLine  two.\n')).toBeNull();
    expect(whitespaceProblem('isrc_code', ' USA1B2400001')).toBeNull();
  });

  it('names compare trimmed, case-folded and without accents', () => {
    expect(nameKey('  Café  del Mar ')).toBe(nameKey('CAFE DEL MAR'));
    expect(nameKey('Éditions')).toBe('editions');
    expect(nameKey('Ωmega')).not.toBe(nameKey('Omega'));
  });

  it('profile links must point at their service', () => {
    expect(profileProblem('spotify', 'https://open.spotify.com/artist/1')).toBeNull();
    expect(profileProblem('youtube', 'https://youtu.be/x')).toBeNull();
    expect(profileProblem('bandcamp', 'https://label0.bandcamp.com/album/r0')).toBeNull();
    expect(profileProblem('spotify', 'https://www.youtube.com/watch?v=1')).toMatch(/links to www\.youtube\.com, not spotify\.com/);
    expect(profileProblem('instagram', '@someone')).toMatch(/not a URL/);
    expect(profileProblem('instagram', 'ftp://instagram.com/x')).toMatch(/not a web link/);
  });

  it('plausibility is judged against the given day', () => {
    const today = todayOf(Date.UTC(2026, 10, 25));
    const all = new Set(RULE_NAMES);
    const rel = (release_date: string) => rowFindings('releases', { id: 'r', release_date }, all, today).map((f) => f.rule);
    expect(rel('2027-12-31')).toEqual([]);
    expect(rel('2028-01-01')).toEqual(['release-date']);
    expect(rel('1899-12-31')).toEqual(['release-date']);
    expect(rowFindings('artists', { id: 'a', birthdate: '2026-11-26' }, all, today).map((f) => f.rule)).toEqual(['birthdate']);
    expect(rowFindings('artists', { id: 'a', birthdate: '2026-11-25', email: 'a@b.co' }, all, today)).toEqual([]);
    expect(rowFindings('artists', { id: 'a', email: 'a@b' }, all, today).map((f) => f.rule)).toEqual(['email']);
  });

  it('import --check rejects only what the per-row rules call errors', () => {
    const c = qualityCheck('tracks', todayOf(Date.UTC(2026, 10, 25)));
    const rec = { line: 2 } as never;
    expect(c.check({ isrc_code: 'BAD' }, rec)).toMatchObject({ code: 'CHECK', message: expect.stringMatching(/^isrc-format \(isrc_code\)/) });
    expect(c.check({ isrc_code: 'us-a1b-24-00001' }, rec)).toBeNull();
    expect(c.check({ isrc_code: 'USA1B2400001', track_title: ' padded ' }, rec)).toBeNull();
    expect(qualityCheck('releases', todayOf(0)).check({ upc_code: '036000291453' }, rec)).toMatchObject({ code: 'CHECK' });
  });
});
