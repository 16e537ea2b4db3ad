import { describe, expect, it } from 'vitest';
import { parsePrefer, renderPreferenceApplied } from '../../src/grammar/prefer.js';
import { ApiError } from '../../src/server/errors.js';
import { isRunFunction, parseRunCall } from '../../src/server/runs.js';

/** Issue 35's unchanged re-runs: the service's calls, without a database (the client's rules: test/import/account/unchanged.test.ts). */

const PROBE = 'ab'.repeat(32);
const FP = `${PROBE}.${'cd'.repeat(32)}`;
const RUN = '0b7c1e6a-5d0f-4f52-9a57-3c2f1d0e9b11';

const refusal = (f: () => unknown): ApiError => {
  try {
    f();
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
  throw new Error('accepted');
};

describe('the service: /rpc/<name> for the two run functions', () => {
  it('serves exactly the two names', () => {
    expect(isRunFunction('catalog_import_run_check')).toBe(true);
    expect(isRunFunction('catalog_import_run_record')).toBe(true);
    for (const other of ['catalog_import_run', 'toString', '__proto__', 'catalog_writes_now']) expect(isRunFunction(other)).toBe(false);
  });

  it('takes named arguments in order and refuses anything else with the argument named', () => {
    expect(parseRunCall('catalog_import_run_check', JSON.stringify({ fingerprint: FP }))).toEqual({ kind: 'run', name: 'catalog_import_run_check', args: [FP] });
    expect(parseRunCall('catalog_import_run_record', JSON.stringify({ records: 5, started: null, run: RUN, fingerprint: FP })).args).toEqual([FP, RUN, null, 5]);
    expect(refusal(() => parseRunCall('catalog_import_run_check', 'not json')).message).toBe('Empty or invalid json');
    expect(refusal(() => parseRunCall('catalog_import_run_check', '[]')).message).toMatch(/an object of named arguments/);
    expect(refusal(() => parseRunCall('catalog_import_run_check', JSON.stringify({ fingerprint: FP, extra: 1 }))).message).toMatch(/has no argument extra/);
    expect(refusal(() => parseRunCall('catalog_import_run_check', JSON.stringify({ fingerprint: 'AB'.repeat(32) }))).message).toMatch(/fingerprint is missing or not two runs of 64 lower-case hex digits joined by a dot \(or the first alone\)/);
    // a check may ask by the probe alone; a record is always of the whole fingerprint
    expect(parseRunCall('catalog_import_run_check', JSON.stringify({ fingerprint: PROBE })).args).toEqual([PROBE]);
    expect(refusal(() => parseRunCall('catalog_import_run_record', JSON.stringify({ fingerprint: PROBE, run: RUN, started: 1, records: 1 }))).message).toMatch(/fingerprint is missing or not two runs of 64 lower-case hex digits joined by a dot$/);
    expect(refusal(() => parseRunCall('catalog_import_run_check', JSON.stringify({ fingerprint: `${PROBE}.` }))).status).toBe(400);
    expect(refusal(() => parseRunCall('catalog_import_run_record', JSON.stringify({ fingerprint: FP, run: "x'; drop table tracks; --", started: 1, records: 1 }))).message).toMatch(/run is missing or not a lower-case uuid/);
    expect(refusal(() => parseRunCall('catalog_import_run_record', JSON.stringify({ fingerprint: FP, run: RUN, started: 1.5, records: 1 }))).status).toBe(400);
    expect(refusal(() => parseRunCall('catalog_import_run_record', JSON.stringify({ fingerprint: FP, run: RUN, started: 1, records: -1 }))).code).toBe('PGRST102');
  });

  it('Prefer: run=<uuid> is a valid preference, never echoed; anything else after run= is invalid', () => {
    expect(parsePrefer(`return=minimal, run=${RUN}`)).toEqual({ return: 'minimal', run: RUN, invalid: [] });
    expect(parsePrefer('run=not-a-uuid').invalid).toEqual(['run=not-a-uuid']);
    expect(parsePrefer(`run=${RUN.toUpperCase()}`).invalid).toHaveLength(1);
    expect(renderPreferenceApplied(parsePrefer(`return=minimal, run=${RUN}`))).toBe('return=minimal');
  });
});
