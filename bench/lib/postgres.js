/**
 * The scratch PostgreSQL database: created (and migrated with the catalog's own migrations)
 * at the start, dropped at the end; plus the psql commands the catalog is measured against.
 */
import pg from 'pg';
import { ARTIST_COLUMNS, LABEL_COLUMNS, LINK_RELEASES_SQL, RELEASE_COLUMNS, TRACK_COLUMNS } from './generate.js';
import { assertOk, runTimed } from './proc.js';

/** The admin URL with another database name. */
export function withDatabase(url, name) {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/** Creates database `name` (dropping a leftover of the same name) and migrates it. */
export async function createScratchDatabase(adminUrl, name) {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = withDatabase(adminUrl, name);
  const { openPostgres } = await import('../../dist/store/postgres.js');
  const store = await openPostgres({ url });
  await store.close();
  return url;
}

/** Drops the scratch database (forcing out any leftover connection). */
export async function dropScratchDatabase(adminUrl, name) {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`drop database if exists ${name} with (force)`);
  } finally {
    await admin.end();
  }
}

/** One short-lived connection for a few statements. */
export async function withClient(url, fn) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** `select version()` short form, e.g. "PostgreSQL 15.20". */
export async function serverVersion(url) {
  return withClient(url, async (c) => {
    const v = (await c.query('select version() as v')).rows[0].v;
    return /^PostgreSQL [\d.]+/.exec(v)?.[0] ?? v;
  });
}

/** psql arguments that connect to `url` quietly and stop on the first error. */
function psqlArgs(url, command) {
  return ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', url, '-c', command];
}

/** Time of `psql -c "\copy tracks(...) from FILE csv header"` (the limit for a plain import). */
export async function psqlCopyIn(url, file) {
  const cols = TRACK_COLUMNS.map(([c]) => c).join(', ');
  return assertOk(await runTimed('psql', psqlArgs(url, `\\copy tracks(${cols}) from '${file}' csv header`)), 'psql \\copy');
}

/** Time and peak memory of `psql -c "\copy (select * from tracks) to stdout csv header" > FILE`. */
export async function psqlCopyOut(url, file) {
  return assertOk(await runTimed('psql', psqlArgs(url, '\\copy (select * from tracks) to stdout csv header'), { stdoutFile: file }), 'psql \\copy to stdout');
}

/** Loads labels and releases (for the "a label's releases" queries) with psql \copy. */
export async function seedLabelsReleases(url, labelsFile, releasesFile, artistsFile) {
  await withClient(url, (c) => c.query('truncate releases, labels, artists cascade'));
  if (artistsFile) assertOk(await runTimed('psql', psqlArgs(url, `\\copy artists(${ARTIST_COLUMNS.join(', ')}) from '${artistsFile}' csv header`)), 'psql \\copy artists');
  assertOk(await runTimed('psql', psqlArgs(url, `\\copy labels(${LABEL_COLUMNS.join(', ')}) from '${labelsFile}' csv header`)), 'psql \\copy labels');
  assertOk(await runTimed('psql', psqlArgs(url, `\\copy releases(${RELEASE_COLUMNS.join(', ')}) from '${releasesFile}' csv header`)), 'psql \\copy releases');
  await withClient(url, (c) => c.query('analyze labels; analyze releases; analyze artists'));
}

/** Gives every release its ten tracks (see LINK_RELEASES_SQL). */
export function linkReleases(url) {
  return withClient(url, async (c) => {
    await c.query(LINK_RELEASES_SQL);
    await c.query('analyze releases');
  });
}

/** Empties the tracks table. */
export function truncateTracks(url) {
  return withClient(url, (c) => c.query('truncate tracks'));
}

/** Number of tracks. */
export function countTracks(url) {
  return withClient(url, async (c) => Number((await c.query('select count(*)::int as n from tracks')).rows[0].n));
}

/** VACUUM ANALYZE tracks, so every measured import starts from the same planner state. */
export function analyzeTracks(url) {
  return withClient(url, (c) => c.query('vacuum analyze tracks'));
}
