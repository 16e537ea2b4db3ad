import { afterAll, describe, expect, it } from 'vitest';
import { PG_URL, tempDir } from '../support/stores.js';
import { catalog, ensureBuilt, type Serve, startServe } from './support.js';

ensureBuilt();

/**
 * The sample labels as `catalog labels list --order name` must give them: the ICU root order a
 * person expects (accents with their base letters, case not splitting the list, other scripts
 * after Latin), not byte order with "Éditions" and "İstanbul" after "Złota Płyta".
 */
const EXPECTED = [
  '  Spaced Out Records  ', 'Bass Culture', 'Blue Note-ish', 'Café Tacvba Discos', 'Éditions Mélodie', 'İstanbul Plak',
  'Kraftwerk Klänge', 'Label\nWith Newline', 'Lo-Fi Lab', 'Midnight, Inc.', 'Møller Musik', 'Ninja Tunes (not that one)',
  'Northern Lights Recordings', "O'Malley's Music", 'Smith, Jones & Co.', 'Sub Pop Up', 'The "Quiet" Room', 'Warp Drive',
  'Zero Gravity', 'Złota Płyta', 'Ελληνικά Ρεκόρντς', 'Ωmega Sound', 'دار الموسيقى', 'さくら Music', '東京レコード',
];

async function namesInOrder(env: Record<string, string>, url?: string): Promise<string[]> {
  const base = url ? ['--url', url] : [];
  const seeded = await catalog([...base, 'seed'], { env });
  expect(seeded.code, seeded.stderr).toBe(0);
  const listed = await catalog([...base, 'labels', 'list', '--order', 'name', '--select', 'name', '--all', '-o', 'json'], { env });
  expect(listed.code, listed.stderr).toBe(0);
  return (JSON.parse(listed.stdout) as Array<{ name: string }>).map((r) => r.name);
}

describe('labels list --order name: names sort as people read them', () => {
  let serve: Serve | null = null;
  afterAll(async () => {
    if (serve) await serve.stop();
  });

  it('on the embedded catalog (PGlite)', async () => {
    expect(await namesInOrder({ CATALOG_DATA: tempDir('name-order-') })).toEqual(EXPECTED);
  });

  it.skipIf(!PG_URL)(`on PostgreSQL${PG_URL ? '' : ' (SKIPPED: set CATALOG_TEST_DATABASE_URL)'}`, async () => {
    const schema = `catalog_name_order_${process.pid}`;
    serve = await startServe(['--database-url', PG_URL!, '--db-schema', schema]);
    try {
      expect(await namesInOrder({}, serve.url)).toEqual(EXPECTED);
    } finally {
      const { default: pg } = await import('pg');
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      await serve.stop();
      serve = null;
      await c.query(`drop schema if exists ${schema} cascade`);
      await c.end();
    }
  });
});
