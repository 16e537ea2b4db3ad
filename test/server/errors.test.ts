import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/server/app.js';
import { ApiError, fromStoreError, statusForSqlState } from '../../src/server/errors.js';
import { errorResponse } from '../../src/server/exchange.js';
import { PostgresStore } from '../../src/store/postgres.js';
import { StoreError } from '../../src/store/store.js';

describe('SQLSTATE → HTTP (reference §9.3)', () => {
  const cases: Array<[string, number, string?]> = [
    ['23505', 409],
    ['23503', 409],
    ['23502', 400],
    ['23514', 400],
    ['22P02', 400],
    ['22007', 400],
    ['42703', 400],
    ['42704', 400],
    ['42P10', 400],
    ['42P01', 404],
    ['42883', 404],
    ['42883', 406, 'function xmlagg(integer) does not exist'],
    ['08006', 503],
    ['08001', 503],
    ['53300', 503],
    ['53400', 500],
    ['57P01', 503],
    ['57014', 500],
    ['54001', 500],
    ['25006', 405],
    ['25001', 500],
    ['40001', 500],
    ['42P17', 500],
    ['21000', 500],
    ['21000', 400, 'UPDATE requires a WHERE clause'],
    ['28000', 403],
    ['P0001', 400],
    ['P0002', 500],
    ['PT402', 402],
    ['XX000', 500],
    ['0P000', 403],
    ['09000', 500],
  ];
  for (const [code, status, message] of cases) {
    it(`${code}${message ? ` (${message})` : ''} → ${status}`, () => {
      expect(statusForSqlState(code, message)).toBe(status);
    });
  }

  it('42501 is 401 for the anonymous role and 403 otherwise', () => {
    expect(statusForSqlState('42501', '', true)).toBe(401);
    expect(statusForSqlState('42501', '', false)).toBe(403);
  });

  it('keeps PostgreSQL texts in the body; 503 carries Retry-After; a statement timeout gets a hint', async () => {
    const e = fromStoreError(new StoreError('23505', 'duplicate key value violates unique constraint "labels_pkey"', 'Key (id)=(x) already exists.'));
    expect(e.body()).toEqual({ code: '23505', details: 'Key (id)=(x) already exists.', hint: null, message: 'duplicate key value violates unique constraint "labels_pkey"' });
    const down = errorResponse(new StoreError('08006', 'connection refused'));
    expect(down.status).toBe(503);
    expect(down.headers.get('retry-after')).toBe('1');
    const slow = fromStoreError(new StoreError('57014', 'canceling statement due to statement timeout'));
    expect(slow.status).toBe(500);
    expect(slow.hint).toMatch(/statement timeout/);
  });

  it('an unexpected error is a generic, logged 500 without a stack trace', async () => {
    const logged: string[] = [];
    const r = errorResponse(new TypeError('boom at secret.ts:12'), (l) => logged.push(l));
    expect(r.status).toBe(500);
    const body = await r.json();
    expect(body).toEqual({ code: 'PGRSTX00', details: null, hint: null, message: 'Internal server error' });
    expect(logged.join('\n')).toContain('boom');
  });

  it('ApiError bodies have exactly code, message, details, hint', () => {
    expect(Object.keys(new ApiError(400, 'PGRST100', 'x').body()).sort()).toEqual(['code', 'details', 'hint', 'message']);
  });
});

describe('a database that cannot be reached (real refused connection, no mock)', () => {
  it('answers 503 with Retry-After and a PostgreSQL-shaped body', async () => {
    const pool = new pg.Pool({ connectionString: 'postgres://postgres@127.0.0.1:1/none', connectionTimeoutMillis: 2_000 });
    pool.on('error', () => {});
    const store = new PostgresStore(pool, 'public');
    const logged: string[] = [];
    const app = createApp({ store, log: (l) => logged.push(l) });
    const r = await app.handle(new Request('http://localhost/labels'));
    expect(r.status).toBe(503);
    expect(r.headers.get('retry-after')).toBe('1');
    const body = await r.json();
    expect(body.code).toBe('PGRST000');
    expect(body.message).toBe('Database connection error. Retrying the connection.');
    expect(Object.keys(body).sort()).toEqual(['code', 'details', 'hint', 'message']);
    await pool.end();
  });
});
