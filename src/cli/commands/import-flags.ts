import { Command } from 'commander';
import { DEDUPE_POLICIES, DEFAULT_BATCH_BYTES, DEFAULT_BATCH_ROWS, DEFAULT_CONCURRENCY, DEFAULT_COPY_BATCH_ROWS, DEFAULT_DEDUPE } from '../../import/defaults.js';
import { INPUT_FORMATS } from '../../format/types.js';
import { DEFAULT_NULL_TOKEN } from '../../schema/conventions.js';
import { defaultKeysText } from '../../schema/facts.js';
import { REF_ROW } from './flag-rows.js';
import { addFlags, type FlagRow, type FlagsOf } from './flag-table.js';

// Apart from import.ts (the run, loaded when a command runs): `catalog import DIR` and `seed` are
// defined at start-up, and defining them must not load the import command's run and its engine.

const MB = 1024 * 1024;

/**
 * Every flag of `<collection> import FILE` and `import DIR`, one row each (issue 39 item 2, as
 * `serve` has SERVE_SETTINGS): the commander chain (importFlags), the flags' type (ImportFlags)
 * and the defaults --help shows all come from it. Imports take no environment variables or config
 * keys of their own (the globals --url, --token and --profile are the root command's).
 */
export const IMPORT_FLAGS = [
  { flag: 'format', value: 'format', choices: INPUT_FORMATS, help: 'input format', fallback: 'from the extension' },
  { flag: 'encoding', value: 'name', help: 'input encoding: utf-8, windows-1252, latin1, utf-16le, utf-16be (a byte-order mark decides on its own)', fallback: 'utf-8' },
  { flag: 'delimiter', value: 'char', help: 'CSV field delimiter: , ; tab |', fallback: 'detected from the header line; tab for .tsv' },
  { flag: 'date-format', value: 'form', help: 'how date cells are written, e.g. DD/MM/YYYY, MM/DD/YYYY, DD.MM.YYYY', fallback: 'ISO YYYY-MM-DD' },
  { flag: 'sheet', value: 'name', help: 'xlsx: the sheet to import', fallback: 'the first' },
  { flag: 'header-row', value: 'n', help: 'xlsx: the row holding the header, rows above it (a title, notes) skipped', fallback: 'the first row with cells' },
  { flag: 'on-conflict', value: 'cols', help: 'conflict columns for upserts', fallback: 'id, when the file has ids' },
  { flag: 'ignore-duplicates', help: 'keep existing rows as they are instead of updating them' },
  { flag: 'dedupe', value: 'policy', choices: DEDUPE_POLICIES, preset: DEFAULT_DEDUPE, help: 'a key repeated in the file: keep the last or first row, or reject them all' },
  { flag: 'map', value: 'header=field', repeatable: true, help: 'map a source header to a field, repeatable ("Release Title=release_title")' },
  { flag: 'ignore-unknown', help: 'skip (and report) headers that match no field instead of failing' },
  { flag: 'null', value: 'token', help: 'cell text meaning null; export writes the same', fallback: DEFAULT_NULL_TOKEN },
  { flag: 'batch-size', value: 'rows', help: 'rows per request (halved automatically on 413)', fallback: `${DEFAULT_BATCH_ROWS}, or ${DEFAULT_COPY_BATCH_ROWS} when the service takes COPY bodies` },
  { flag: 'batch-bytes', value: 'size', help: 'largest request body, e.g. 4MB', fallback: `${DEFAULT_BATCH_BYTES / MB}MB` },
  { flag: 'concurrency', value: 'n', help: 'requests in flight', fallback: String(DEFAULT_CONCURRENCY) },
  { flag: 'rejects', value: 'file', help: 'where rejected rows go', fallback: '<file>.rejects.csv beside the input' },
  { flag: 'checkpoint', value: 'file', help: 'checkpoint file', fallback: '<file>.checkpoint.json beside the input' },
  { flag: 'resume', help: 'continue an interrupted import from its checkpoint' },
  { flag: 'dry-run', help: 'validate everything and ask the service which rows exist; write nothing' },
  { flag: 'recheck', help: 'compare every row even when nothing has written the catalog since this file was last imported with these settings', fallback: 'such a re-run sends nothing' },
  { flag: 'summary', value: 'file', help: 'also write the summary as JSON (for CI)' },
  {
    flag: 'check',
    value: 'level',
    optional: true,
    help: 'also reject rows `catalog check` rules flag at or above LEVEL (error: malformed ISRC, bad UPC check digit, an ISRC/UPC repeated in the file; warning: spaces, implausible dates too); the rest are counted in the summary',
  },
  { flag: 'key', value: 'cols', help: 'natural key rows without an id are matched by', fallback: defaultKeysText() },
  { flag: 'source', value: 'name', help: "the system the input comes from (e.g. legacy): with --source-id, each row's id there is kept and matched first on a re-run" },
  { flag: 'source-id', value: 'column', help: "with --source: the column holding the source system's id of each row" },
  REF_ROW,
  {
    flag: 'create-missing',
    help: "a reference to a name no record has creates that record, and a credit name no artist has (tracks) creates the artist; an unknown ISRC in a release's tracks is still rejected: a track needs more than its ISRC",
    fallback: 'the row is rejected',
  },
  { flag: 'sync', help: 'also remove records in --scope that the input does not have (asks first; see --yes, --dry-run)' },
  { flag: 'scope', value: 'expr', help: "with --sync: the records the input stands for ('label=Chinook Records'), or all" },
  { flag: 'cascade', help: 'with --sync: remove rows that refer to removed records first (else they block the sync)' },
  { flag: 'yes', short: 'y', help: 'with --sync: do not ask before removing' },
] as const satisfies readonly FlagRow[];

/** The flags of `catalog <collection> import`, as commander parses them: one key per IMPORT_FLAGS row. */
export type ImportFlags = FlagsOf<typeof IMPORT_FLAGS>;

/** Import's flags, shared by `<collection> import FILE` and `import DIR`: every row of IMPORT_FLAGS. */
export function importFlags(cmd: Command): Command {
  return addFlags(cmd, IMPORT_FLAGS);
}

/** The flags of a directory import (`import DIR`, `seed [DIR]`) beside import's own. */
export const DIRECTORY_FLAGS = [
  { flag: 'skip-unknown', help: 'skip files named after no collection', fallback: 'refuse them, importing nothing' },
] as const satisfies readonly FlagRow[];

/** The flags of DIRECTORY_FLAGS, as commander parses them. */
export type DirectoryFlags = FlagsOf<typeof DIRECTORY_FLAGS>;

/**
 * A command that imports a directory (`import DIR`, `seed [DIR]`): import's flags, and what to do
 * with files named after no collection.
 */
export function directoryCommand(name: string, description: string, argument: string, argumentHelp: string): Command {
  return addFlags(importFlags(new Command(name).description(description).argument(argument, argumentHelp)), DIRECTORY_FLAGS);
}
