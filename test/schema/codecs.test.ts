import { describe, expect, it } from 'vitest';
import {
  booleanWord, canonicalUuid, columnKind, copyText, dateText, instantKey, isoInstant, K_BOOL, K_DATE, K_JSON, K_TEXT, K_TIMESTAMP, K_UUID, keyPart, normalizeUuid, parseText, timestampHint, validInstant,
} from '../../src/schema/codecs.js';

const ID = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11';
const bytes = (s: string) => [Buffer.from(s), 0, Buffer.byteLength(s)] as const;

describe('column codecs', () => {
  it('one switch names the kinds; every other type is text', () => {
    expect(['uuid', 'boolean', 'date', 'timestamp with time zone', 'jsonb', 'text', 'integer'].map(columnKind)).toEqual([K_UUID, K_BOOL, K_DATE, K_TIMESTAMP, K_JSON, K_TEXT, K_TEXT]);
  });

  it('uuid: any spelling PostgreSQL reads, normalised; the byte check passes only the canonical form', () => {
    expect(normalizeUuid(`{${ID.toUpperCase()}}`)).toBe(ID);
    expect(normalizeUuid(ID.replaceAll('-', ''))).toBe(ID);
    expect(normalizeUuid('nope')).toBeNull();
    expect(canonicalUuid(...bytes(ID))).toBe(true);
    expect(canonicalUuid(...bytes(ID.toUpperCase()))).toBe(false);
    expect(keyPart(K_UUID, ` ${ID.toUpperCase()} `)).toBe(ID);
  });

  it('boolean words, any case and spaces around', () => {
    expect(['Yes', ' on ', 't', '1', 'TRUE', 'y'].map(booleanWord)).toEqual([true, true, true, true, true, true]);
    expect(['No', 'off', 'f', '0', 'false', 'N'].map(booleanWord)).toEqual([false, false, false, false, false, false]);
    expect(booleanWord('maybe')).toBeNull();
    expect(keyPart(K_BOOL, 'yes')).toBe('true');
    expect(copyText(false)).toBe('f');
  });

  it('dates: YYYY-MM-DD of a real day', () => {
    expect(dateText(' 2024-02-29 ')).toBe('2024-02-29');
    expect(dateText('2023-02-29')).toBe('range');
    expect(dateText('29.02.2024')).toBe('syntax');
    expect(parseText(K_DATE, '2023-02-29')).toMatchObject({ ok: false, code: '22008' });
  });

  it('timestamps need a zone: the text and byte checks agree, and a missing zone is named', () => {
    for (const s of ['2024-01-15T09:00:00Z', '2024-01-15 09:00:00.123456+01:00', '2024-01-15T09:00:00-05:30', '2020-01-01 00:00:00.028+00', '2024-01-15T09:00:00+0530']) {
      expect(validInstant(s), s).toBe(true);
      expect(isoInstant(...bytes(s)), s).toBe(true);
    }
    for (const s of ['2024-01-15T09:00:00', '2024-01-15', '2024-02-30T09:00:00Z', '2024-01-15T09:00:00+1', '2024-01-15T09:00:00+01:0', '2024-01-15T09:00:00+0a']) {
      expect(validInstant(s), s).toBe(false);
      expect(isoInstant(...bytes(s)), s).toBe(false);
    }
    expect(timestampHint('2024-01-15T09:00:00')).toMatch(/no time zone/);
    expect(parseText(K_TIMESTAMP, '2024-01-15T09:00:00')).toMatchObject({ ok: false, code: '22007', message: expect.stringMatching(/no time zone/) });
    expect(instantKey('2024-01-15 09:00:00+01')).toBe(instantKey('2024-01-15T08:00:00Z'));
  });

  it('jsonb: parsed, with depth and NUL refused; key text re-serialised', () => {
    expect(parseText(K_JSON, '{"a": [1]}')).toEqual({ ok: true, value: { a: [1] } });
    expect(parseText(K_JSON, '{a:1}')).toMatchObject({ ok: false, code: '22P02' });
    expect(parseText(K_JSON, `${'['.repeat(600)}${']'.repeat(600)}`)).toMatchObject({ ok: false, code: '54001' });
    expect(parseText(K_JSON, '"\\u0000"')).toMatchObject({ ok: false, code: '22P05' });
    expect(keyPart(K_JSON, '{ "a" : 1 }')).toBe('{"a":1}');
  });

  it('COPY text of a known value: quoted, quotes doubled; the empty string is ""', () => {
    expect(copyText('a "b"')).toBe('"a ""b"""');
    expect(copyText('')).toBe('""');
  });
});
