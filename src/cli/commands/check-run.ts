import type { Finding, Severity } from '../../check/rules.js';
import { RULE_NAMES, RULES, SEVERITY_RANK as RANK } from '../../check/rules.js';
import { measured, wrapWords } from '../../format/width.js';
import { compileQuery } from '../../grammar/compile.js';
import { renderPrefer } from '../../grammar/prefer.js';
import type { Query, WhereClause } from '../../grammar/types.js';
import type { Context } from '../context.js';
import { FindingsFound, UsageError } from '../errors.js';
import { count as countFlag } from '../flags/query.js';
import { didYouMean } from '../../format/suggest.js';
import { abbreviationLength } from '../../format/table.js';
import { outputFormat, plural, success, writeRows } from '../output.js';
import { type CheckFlags, DEFAULT_EXAMPLES, DEFAULT_FAIL_ON, DEFAULT_SEVERITY } from './check-flags.js';
import { confirmWrite } from './confirm.js';

/** `catalog check`'s run: reading, reporting, fixing (src/cli/commands/check.ts defines the command). */


/** `--list-rules`: on a terminal each rule with its reason in full; otherwise rows in the chosen format. */
async function listRules(ctx: Context): Promise<void> {
  if ((await outputFormat(ctx)) !== 'table') return void (await writeRows(ctx, RULES.map((r) => ({ ...r })), { selected: true }));
  const s = ctx.style('stdout');
  const width = Math.max(40, (ctx.io.stdout.columns || 100) - 4);
  const lines = await measured(() => RULES.flatMap((r) => [
    `${s.bold(r.name)} (${r.severity}${r.fixable ? ', fixable' : ''}): ${r.scope}`,
    ...wrapWords(r.rationale.split(' '), width).map((l) => `  ${l}`),
    '',
  ]));
  await ctx.io.stdout.write(`${lines.join('\n')}`);
}

/** Refuses a name that is not one of `known` (exit 2), with a did-you-mean: `kind` is "rule" or "collection". */
function requireKnown(kind: string, names: readonly string[], known: readonly string[]): void {
  for (const n of names) {
    if (known.includes(n)) continue;
    const guess = didYouMean(n, known);
    throw new UsageError(`unknown ${kind} '${n}'${guess ? ` (did you mean '${guess}'?)` : ''}`, `${kind}s: ${known.join(', ')}`);
  }
}

/** The rules a --rules value names (all when absent). */
function chosenRules(text: string | undefined): Set<string> {
  if (text === undefined) return new Set(RULE_NAMES);
  const names = text.split(',').map((s) => s.trim()).filter(Boolean);
  requireKnown('rule', names, RULE_NAMES);
  if (names.length === 0) throw new UsageError('--rules needs at least one rule name');
  return new Set(names);
}

/** The collections named (all the service describes when none are), checked against the table model. */
function chosenCollections(names: string[], known: readonly string[]): string[] {
  requireKnown('collection', names, known);
  return names.length ? names : [...known];
}

/** Runs the check: findings out (grouped on a terminal, one per line otherwise), then --fix, then the exit code. */
export async function runCheck(collectionArgs: string[], opts: CheckFlags, ctx: Context): Promise<void> {
  if (opts.listRules) return listRules(ctx);
  const schema = await ctx.schema();
  const collections = chosenCollections(collectionArgs, [...schema.tables.values()].filter((t) => !t.readOnly).map((t) => t.name).sort());
  const rules = chosenRules(opts.rules);
  const pageSize = countFlag('--page-size', opts.pageSize);
  if (pageSize === 0) throw new UsageError('--page-size must be at least 1');
  const threshold = RANK[opts.severity ?? DEFAULT_SEVERITY];
  const format = await outputFormat(ctx);
  const [{ checkCatalog }, { createProgress }, { contextTransport }, { boundHeapGrowth }] = await Promise.all([
    import('../../check/check.js'),
    import('../progress.js'),
    import('../transport.js'),
    import('../memory.js'),
  ]);
  boundHeapGrowth();
  // reading is harmless: the global --dry-run holds back only the fixes (their PATCHes are printed)
  const dryRun = ctx.globals.dryRun;
  ctx.globals.dryRun = false;
  const transport = await contextTransport(ctx);
  ctx.globals.dryRun = dryRun;
  const abort = new AbortController();
  void ctx.waitForSignal().then(() => abort.abort());
  const progress = await createProgress(ctx.io.stderr, { quiet: ctx.globals.quiet, clock: () => ctx.clock.now(), label: 'check' });
  const perRule = opts.allFindings ? Infinity : (countFlag('--limit-examples', opts.limitExamples) ?? DEFAULT_EXAMPLES);
  const tally = new Tally(perRule);
  const fixable: Finding[] = [];
  let fixableCount = 0;
  const rows = new Map<string, number>();
  const findings = checkCatalog({
    transport,
    tables: [...schema.tables.values()],
    collections,
    rules,
    now: ctx.clock.now(),
    pageSize,
    signal: abort.signal,
    onRows: (collection, n) => {
      rows.set(collection, n);
      progress.update({ phase: collection, rows: [...rows.values()].reduce((a, b) => a + b, 0) });
    },
  });
  async function* kept(): AsyncGenerator<Record<string, unknown>> {
    for await (const batch of findings) {
      for (const f of batch) {
        if (RANK[f.severity] < threshold) continue;
        tally.add(f);
        if (f.fixable && opts.fix) fixable.push(f);
        else if (f.fixable) fixableCount++;
        if (format !== 'table') yield { ...f, value: f.value ?? null };
      }
    }
  }
  try {
    if (format === 'table') for await (const _ of kept());
    else await writeRows(ctx, kept(), { selected: true });
  } finally {
    progress.done();
  }
  if (abort.signal.aborted) throw new (await import('../errors.js')).Interrupted('interrupted: the check did not finish');
  if (format === 'table') await writeGroups(ctx, tally);
  const total = [...rows.values()].reduce((a, b) => a + b, 0);
  await ctx.note(tally.summary(collections.length, total, opts.fix || fixableCount === 0 ? '' : ` (${fixableCount.toLocaleString('en-US')} fixable: catalog check --fix)`));
  let fixed = new Set<Finding>();
  if (opts.fix) fixed = await applyFixes(ctx, fixable, opts.yes);
  const failOn = opts.failOn ?? DEFAULT_FAIL_ON;
  if (failOn === 'none') return;
  const failing = tally.atLeast(failOn) - [...fixed].filter((f) => RANK[f.severity] >= RANK[failOn]).length;
  if (failing > 0) throw new FindingsFound(`${plural(failing, 'finding', 'findings')} at or above ${failOn} (--fail-on ${failOn})`);
}

/** Findings by rule: counts, and the first few of each for the terminal view (nothing more is kept). */
class Tally {
  readonly byRule = new Map<string, { severity: Severity; count: number; fixable: number; examples: Finding[] }>();

  constructor(private readonly perRule = DEFAULT_EXAMPLES) {}

  add(f: Finding): void {
    const key = `${f.rule}\u0000${f.severity}`;
    const g = this.byRule.get(key) ?? { severity: f.severity, count: 0, fixable: 0, examples: [] };
    g.count++;
    if (f.fixable) g.fixable++;
    if (g.examples.length < this.perRule) g.examples.push(f);
    this.byRule.set(key, g);
  }

  /** Findings at or above a level. */
  atLeast(level: Severity): number {
    return [...this.byRule.values()].filter((g) => RANK[g.severity] >= RANK[level]).reduce((a, g) => a + g.count, 0);
  }

  summary(collections: number, rows: number, fixHint: string): string {
    const n = (s: Severity) => [...this.byRule.values()].filter((g) => g.severity === s).reduce((a, g) => a + g.count, 0);
    const found = n('error') + n('warning') === 0 ? 'no findings' : `${many(n('error'), 'error')}, ${many(n('warning'), 'warning')}`;
    return `Checked ${many(collections, 'collection')}, ${many(rows, 'row')}: ${found}${fixHint}`;
  }
}

/** "1 row", "12,345 rows". */
const many = (n: number, noun: string) => `${n.toLocaleString('en-US')} ${noun}${n === 1 ? '' : 's'}`;

/** A value as an example shows it: quoted, one line, at most `max` characters (40 for the fix list). */
function shown(v: unknown, max = 42): string {
  if (v === null || v === undefined) return '∅';
  const s = JSON.stringify(typeof v === 'string' ? v : JSON.stringify(v));
  return s.length > max ? `${s.slice(0, Math.max(4, max - 2))}…"` : s;
}


/**
 * The terminal view: per rule a line with its severity, name and counts, then one line per
 * example — collection.field, the short id, the value cut to what is left of the width — and how
 * to see the rest. Rule, id and value always show, at any width from 60 columns.
 */
async function writeGroups(ctx: Context, tally: Tally): Promise<void> {
  if (tally.byRule.size === 0) return;
  const s = ctx.style();
  const width = ctx.io.stdout.isTTY && ctx.io.stdout.columns > 0 ? Math.max(ctx.io.stdout.columns, 60) : Infinity;
  const groups = [...tally.byRule.entries()].sort(([, a], [, b]) => RANK[b.severity] - RANK[a.severity] || b.count - a.count);
  // ids cut as a table cuts them: a prefix `get`, `update` and `remove` take, telling the examples apart
  const idLength = width === Infinity ? 0 : abbreviationLength(groups.flatMap(([, g]) => g.examples.map((f) => String(f.id ?? ''))));
  const lines: string[] = [];
  for (const [key, g] of groups) {
    const rule = key.split('\u0000')[0];
    const mark = g.severity === 'error' ? s.red('error  ') : s.yellow('warning');
    lines.push(`${mark} ${s.bold(rule)}  ${many(g.count, 'finding')}${g.fixable ? `, ${g.fixable.toLocaleString('en-US')} fixable` : ''}`);
    const where = g.examples.map((f) => `${f.collection}.${f.field}`);
    const whereWidth = Math.max(...where.map((w) => w.length));
    g.examples.forEach((f, i) => {
      const id = idLength && typeof f.id === 'string' ? f.id.slice(0, idLength) : String(f.id ?? '');
      const head = `  ${where[i].padEnd(whereWidth)}  ${id}  `;
      lines.push(`${s.dim(head)}${shown(f.value, width === Infinity ? Infinity : Math.max(12, width - head.length))}`);
    });
    const rest = g.count - g.examples.length;
    if (rest > 0) lines.push(s.dim(`  … ${rest.toLocaleString('en-US')} more (--limit-examples N, --all-findings)`));
  }
  await ctx.io.stdout.write(`${lines.join('\n')}\n`);
}

/** The guard a fix is sent with: the field still holds the value the check saw. */
function unchanged(field: string, value: unknown): WhereClause {
  const filter = value === null || value === undefined ? { op: 'is' as const, value: 'null' } : { op: 'eq' as const, value: String(value) };
  return { path: [], condition: { kind: 'filter', field: { name: field, jsonPath: [] }, negated: false, ...filter } };
}

/**
 * Shows each fix (collection, id, field, old → new), asks (or needs --yes), then PATCHes each row
 * by id, guarded by its old values so a row someone changed since the check is left alone (and
 * reported). Returns the findings it fixed.
 */
async function applyFixes(ctx: Context, fixable: Finding[], yes: boolean | undefined): Promise<Set<Finding>> {
  const fixed = new Set<Finding>();
  if (fixable.length === 0) {
    await ctx.note('Nothing to fix');
    return fixed;
  }
  const byRow = new Map<string, Finding[]>();
  for (const f of fixable) {
    const key = `${f.collection}/${f.id}`;
    const list = (byRow.get(key) ?? []).filter((g) => g.field !== f.field || f.rule !== 'consistency');
    if (!list.some((g) => g.field === f.field)) list.push(f);
    byRow.set(key, list);
  }
  const diff = [...byRow.values()].flat().map((f) => ({ collection: f.collection, id: f.id, field: f.field, old: shown(f.value), new: shown(f.fix) }));
  await writeRows(ctx, diff, { selected: true, format: (await outputFormat(ctx)) === 'table' ? 'table' : undefined });
  const what = `${plural(diff.length, 'field', 'fields')} in ${plural(byRow.size, 'row', 'rows')}`;
  if (!ctx.dryRun && !(await confirmWrite(ctx, `Fix ${what}?`, `this would change ${what}`, yes))) {
    await ctx.note('Nothing fixed');
    return fixed;
  }
  let changed = 0;
  let skipped = 0;
  for (const list of byRow.values()) {
    const { collection, id } = list[0];
    const query: Query = {
      where: [unchanged('id', id), ...list.map((f) => unchanged(f.field, f.value))],
      order: [],
      page: [],
      select: [{ type: 'field', field: { name: 'id', jsonPath: [] } }],
    };
    const res = await ctx.send({
      method: 'PATCH',
      path: `/${collection}`,
      query: compileQuery(query),
      // one row by id, guarded by its old values: max-affected makes the service refuse anything more
      headers: { Prefer: renderPrefer({ return: 'representation', handling: 'strict', maxAffected: 1 }) },
      body: JSON.stringify(Object.fromEntries(list.map((f) => [f.field, f.fix]))),
    });
    if (!res) continue;
    if ((JSON.parse(res.body || '[]') as unknown[]).length === 0) skipped++;
    else {
      changed++;
      for (const f of list) fixed.add(f);
    }
  }
  if (skipped) await ctx.warn(`${plural(skipped, 'row was', 'rows were')} changed by someone else since the check and left alone; run catalog check again`);
  await success(ctx, `Fixed ${plural(fixed.size, 'field', 'fields')} in ${plural(changed, 'row', 'rows')}`);
  return fixed;
}
