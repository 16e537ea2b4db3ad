#!/usr/bin/env node
/**
 * Stand-in for `catalog tracks import|export` while those CLI commands are not wired yet: drives
 * the same engines (dist/import/engine.js, dist/export/export.js) through the same HTTP client
 * against the same running service, without the CLI's argument parsing and progress display.
 * The bench marks every figure taken this way "(engine driver)".
 *   node bench/peers/engine-driver.js import URL FILE SCRATCH_DIR
 *   node bench/peers/engine-driver.js export URL FILE
 */
import { join } from 'node:path';

const [op, url, file, scratch] = process.argv.slice(2);
const { CatalogClient } = await import('../../dist/client/client.js');
const { clientTransport } = await import('../../dist/import/transport.js');
const { tableByName } = await import('../../dist/schema/catalog.js');
const transport = clientTransport(new CatalogClient({ baseUrl: url }), { idempotentWrites: true });
const table = tableByName('tracks');
if (op === 'import') {
  const { importFile } = await import('../../dist/import/engine.js');
  const s = await importFile({ table, input: file, rejectsPath: join(scratch, 'rejects.csv'), checkpointPath: join(scratch, 'checkpoint.json') }, transport);
  process.stdout.write(`${JSON.stringify({ records: s.records, inserted: s.inserted, updated: s.updated, unchanged: s.unchanged, rejected: s.rejected })}\n`);
  if (s.rejected) process.exitCode = 3;
} else if (op === 'export') {
  const { exportTable } = await import('../../dist/export/export.js');
  const { fileSink } = await import('../../dist/export/sink.js');
  const out = fileSink(file);
  const n = await exportTable({ transport, table, format: 'csv', out });
  await out.commit();
  process.stdout.write(`${JSON.stringify({ rows: n })}\n`);
} else throw new Error(`unknown op ${op}`);
// The client's keep-alive pool must not hold the process open.
process.exit(process.exitCode ?? 0);
