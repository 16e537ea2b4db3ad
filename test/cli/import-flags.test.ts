import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { IMPORT_FLAGS, type ImportFlags, importFlags } from '../../src/cli/commands/import-flags.js';
import { DEFAULT_BATCH_BYTES, DEFAULT_BATCH_ROWS, DEFAULT_CONCURRENCY, DEFAULT_COPY_BATCH_ROWS, DEFAULT_DEDUPE } from '../../src/import/options.js';
import { DEFAULT_NULL_TOKEN } from '../../src/schema/conventions.js';

/**
 * Issue 39 item 2: import's flags are one table (IMPORT_FLAGS). The commander chain and the
 * flags' type come from it, and --help shows the engine's own defaults, not a restatement.
 */
const camel = (flag: string) => flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

function command(): Command {
  return importFlags(new Command('import').argument('<file>').exitOverride().configureOutput({ writeOut: () => {}, writeErr: () => {} }));
}

describe('import flags: one table', () => {
  it('defines one option per row, spelled as the row says', () => {
    const cmd = command();
    expect(cmd.options.map((o) => o.long)).toEqual(IMPORT_FLAGS.map((r) => `--${r.flag}`));
    expect(cmd.options.find((o) => o.long === '--yes')?.short).toBe('-y');
    expect(IMPORT_FLAGS.length).toBeGreaterThan(25);
  });

  it("--help shows the engine's defaults", () => {
    const help = command().helpInformation().replace(/\s+/g, ' ');
    expect(help).toContain(`requests in flight (default: ${DEFAULT_CONCURRENCY})`);
    expect(help).toContain(`(default: ${DEFAULT_BATCH_ROWS}, or ${DEFAULT_COPY_BATCH_ROWS} when the service takes COPY bodies)`);
    expect(help).toContain(`largest request body, e.g. 4MB (default: ${DEFAULT_BATCH_BYTES / 1024 / 1024}MB)`);
    expect(help).toContain(`export writes the same (default: ${DEFAULT_NULL_TOKEN})`);
    expect(help).toContain(`default: "${DEFAULT_DEDUPE}"`);
  });

  it('hands every flag over under its camel-case key, with the value the row says it takes', () => {
    const cmd = command();
    const args: string[] = [];
    for (const row of IMPORT_FLAGS) {
      args.push(`--${row.flag}`);
      if ('choices' in row) args.push(row.choices[row.choices.length - 1]);
      else if ('value' in row && !('optional' in row)) args.push(`${row.flag}-value`);
    }
    cmd.parse(['x.csv', ...args, '--map', 'A=b', '--ref', 'label=labels.name'], { from: 'user' });
    const flags = cmd.opts() as ImportFlags;
    expect(Object.keys(flags).sort()).toEqual(IMPORT_FLAGS.map((r) => camel(r.flag)).sort());
    expect(flags.batchSize).toBe('batch-size-value');
    expect(flags.dryRun).toBe(true);
    expect(flags.check).toBe(true);
    expect(flags.format).toBe('xlsx');
    expect(flags.map).toEqual(['map-value', 'A=b']);
    expect(flags.ref).toEqual(['ref-value', 'label=labels.name']);
  });

  it('leaves out what is not given, but for the default commander fills in (--dedupe)', () => {
    const cmd = command();
    cmd.parse(['x.csv'], { from: 'user' });
    expect(cmd.opts()).toEqual({ dedupe: DEFAULT_DEDUPE });
  });
});
