import { Command, Option } from 'commander';
import { defaultKeysText, defaultReferencesText } from '../../schema/facts.js';
import { collect } from './shared.js';

// Apart from import.ts (the run, loaded when a command runs): `catalog import DIR` and `seed` are
// defined at start-up, and defining them must not load the import command's run and its engine.

/** Import's flags, shared by `<collection> import FILE` and `import DIR`. */
export function importFlags(cmd: Command): Command {
  return cmd
    .addOption(new Option('--format <format>', 'input format (default: from the extension)').choices(['csv', 'json', 'ndjson', 'yaml', 'xlsx']))
    .option('--encoding <name>', 'input encoding: utf-8 (default), windows-1252, latin1, utf-16le, utf-16be (a byte-order mark decides on its own)')
    .option('--delimiter <char>', 'CSV field delimiter: , ; tab | (default: detected from the header line; tab for .tsv)')
    .option('--date-format <form>', 'how date cells are written, e.g. DD/MM/YYYY, MM/DD/YYYY, DD.MM.YYYY (default: ISO YYYY-MM-DD)')
    .option('--sheet <name>', 'xlsx: the sheet to import (default: the first)')
    .option('--header-row <n>', 'xlsx: the row holding the header, rows above it (a title, notes) skipped (default: the first row with cells)')
    .option('--on-conflict <cols>', 'conflict columns for upserts (default: id, when the file has ids)')
    .option('--ignore-duplicates', 'keep existing rows as they are instead of updating them')
    .addOption(new Option('--dedupe <policy>', 'a key repeated in the file: keep the last or first row, or reject them all').choices(['last', 'first', 'error']).default('last'))
    .option('--map <header=field>', 'map a source header to a field, repeatable ("Release Title=release_title")', collect)
    .option('--ignore-unknown', 'skip (and report) headers that match no field instead of failing')
    .option('--null <token>', 'cell text meaning null (default \\N); export writes the same')
    .option('--batch-size <rows>', 'rows per request (default 1000, or 5000 when the service takes COPY bodies; halved automatically on 413)')
    .option('--batch-bytes <size>', 'largest request body, e.g. 4MB (default 4MB)')
    .option('--concurrency <n>', 'requests in flight (default 3)')
    .option('--rejects <file>', 'where rejected rows go (default <file>.rejects.csv beside the input)')
    .option('--checkpoint <file>', 'checkpoint file (default <file>.checkpoint.json beside the input)')
    .option('--resume', 'continue an interrupted import from its checkpoint')
    .option('--dry-run', 'validate everything and ask the service which rows exist; write nothing')
    .option('--recheck', 'compare every row even when nothing has written the catalog since this file was last imported with these settings (default: such a re-run sends nothing)')
    .option('--summary <file>', 'also write the summary as JSON (for CI)')
    .option('--check [level]', 'also reject rows `catalog check` rules flag at or above LEVEL (error: malformed ISRC, bad UPC check digit, an ISRC/UPC repeated in the file; warning: spaces, implausible dates too); the rest are counted in the summary')
    .option('--key <cols>', `natural key rows without an id are matched by (default: ${defaultKeysText()})`)
    .option('--source <name>', "the system the input comes from (e.g. legacy): with --source-id, each row's id there is kept and matched first on a re-run")
    .option('--source-id <column>', "with --source: the column holding the source system's id of each row")
    .option('--ref <field=collection.column>', `resolve a text field to its id by name, repeatable (${defaultReferencesText()} unasked)`, collect)
    .option('--create-missing', 'a reference to a name no record has creates that record, and a credit name no artist has (tracks) creates the artist (default: the row is rejected); an unknown ISRC in a release\'s tracks is still rejected: a track needs more than its ISRC')
    .option('--sync', 'also remove records in --scope that the input does not have (asks first; see --yes, --dry-run)')
    .option('--scope <expr>', "with --sync: the records the input stands for ('label=Chinook Records'), or all")
    .option('--cascade', 'with --sync: remove rows that refer to removed records first (else they block the sync)')
    .option('-y, --yes', 'with --sync: do not ask before removing');
}
