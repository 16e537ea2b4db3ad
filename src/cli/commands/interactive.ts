import { compileQuery } from '../../grammar/compile.js';
import { startSpinner } from '../../io/spinner.js';
import type { Context } from '../context.js';
import { Interrupted, NotFoundError, UsageError } from '../errors.js';
import { parseAssignments } from '../flags/body.js';
import { byId } from '../flags/query.js';
import { resolveRelativeDate } from '../flags/relative-date.js';
import { type Asker, type Choice, inquirerAsker, isPromptAbort, isPromptCancel } from '../prompts/asker.js';
import {
  answerValue,
  askableFields,
  booleanDefault,
  dateFeedback,
  defaultNote,
  isKeyField,
  MANY_FIELDS,
  type PromptKind,
  promptKind,
  sameValue,
  validateDate,
  validateJson,
  validateScalar,
  validateUuid,
  valueText,
} from '../prompts/fields.js';
import { askLinks, linkFieldKind } from '../prompts/links.js';
import { type Reference, referenceFinder } from '../prompts/lookup.js';
import { renderSummary, type SummaryRow } from '../prompts/summary.js';
import { measured } from '../../format/width.js';
import { type ColumnDef, type TableDef, typeKind } from '../../schema/model.js';
import { runAdd } from './add.js';
import { singularOf } from './shared.js';
import { runUpdate } from './update.js';

export interface InteractiveAddOptions {
  collection: string;
  /** FIELD=VALUE arguments given with --interactive: they fill the answers in advance. */
  presets?: string[];
  json?: string;
  file?: string;
}

export interface InteractiveUpdateOptions {
  collection: string;
  id?: string;
  presets?: string[];
  /** --where/--or/--all-rows were given: interactive editing needs one id instead. */
  byFilter?: boolean;
}

/**
 * Refuses to prompt when stdin is not a terminal, so a script never hangs on a question:
 * a usage error (exit 2) that names what to pass instead. Checked before anything is opened.
 */
export function requireTerminal(ctx: Context, instead: string): void {
  if (ctx.io.stdin.isTTY) return;
  throw new UsageError('--interactive needs a terminal to ask on, and stdin is not one (nothing was sent)', `pass the fields as arguments instead: ${instead}`);
}

/** `catalog <collection> add --interactive`: asks field by field, shows a summary, then adds the record. */
export async function runInteractiveAdd(opts: InteractiveAddOptions, ctx: Context, asker?: Asker): Promise<void> {
  const name = opts.collection;
  if (opts.json !== undefined || opts.file !== undefined) {
    throw new UsageError('--interactive asks for the fields itself: leave out --json/--file', `or drop --interactive: catalog ${name} add --json '{…}'`);
  }
  requireTerminal(ctx, `catalog ${name} add FIELD=VALUE... or --json/--file (the fields: catalog ${name} describe)`);
  const ask = asker ?? inquirerAsker(ctx.io.stdin.stream, ctx.io.stderr);
  const table = await ctx.table(name);
  const presets = parseAssignments(opts.presets ?? [], table, ctx.removedFields(name));
  const singular = singularOf(name);
  const s = ctx.style();

  await ctx.io.stderr.write(s.dim(`New ${singular}: answer each question; Enter keeps the value shown in (…). Nothing is sent until you confirm.\n`));
  const record: Record<string, unknown> = {};
  const rows: SummaryRow[] = [];
  let cancelledAdd = false;
  await cancellable(async () => {
    const askable = askableFields(table);
    // Fields given as presets that are not asked (an id) go in as given.
    for (const [k, v] of Object.entries(presets)) {
      if (!askable.some((f) => f.name === k)) {
        record[k] = v;
        rows.push({ field: k, after: v });
      }
    }
    const fields = await chooseFields(ask, ctx, askable, 'add', (f) => isKeyField(table, f) || f.name in presets);
    for (const field of fields) {
      const initial = field.name in presets ? { value: presets[field.name], given: true } : field.name in record ? { value: record[field.name], given: false } : undefined;
      const answer = await askField(ask, ctx, field, 'add', initial, undefined, record, name);
      if (answer === undefined) continue;
      record[field.name] = answer.value;
      setRow(rows, { field: field.name, after: answer.value, shown: answer.shown });
      // Picking a label, genre or subgenre fills its text copy too, as the sample rows have it.
      const copy = nameCopyOf(table, field);
      if (copy && answer.name !== undefined && !(copy in presets)) {
        record[copy] = answer.name;
        setRow(rows, { field: copy, after: answer.name });
      }
    }
    await ctx.io.stderr.write(`\n${await measured(() => renderSummary(`New ${singular}:`, rows, s, ctx.io.stderr.columns, 'Fields not listed take their defaults.'))}`);
    if (!(await confirmOrEsc(ask, `Add this ${singular}?`))) throw new Cancelled();
  }).catch(async (err: unknown) => {
    if (!(err instanceof Cancelled)) throw err;
    cancelledAdd = true;
  });
  if (cancelledAdd) {
    await ctx.note('Nothing added');
    return;
  }
  await runAdd({ collection: name, pairs: [], json: JSON.stringify(record) }, ctx);
}

/** Adds a summary row, or replaces the one of the same field. */
function setRow(rows: SummaryRow[], row: SummaryRow): void {
  const at = rows.findIndex((r) => r.field === row.field);
  if (at >= 0) rows[at] = row;
  else rows.push(row);
}

/** The final question; Esc there is a "no". */
async function confirmOrEsc(ask: Asker, message: string): Promise<boolean> {
  try {
    return await ask.confirm({ message, default: true });
  } catch (err) {
    if (isPromptAbort(err)) return false;
    throw err;
  }
}

/** `catalog <collection> update <id> --interactive`: asks each field with its current value, shows old → new, then saves the changes. */
export async function runInteractiveUpdate(opts: InteractiveUpdateOptions, ctx: Context, asker?: Asker): Promise<void> {
  const name = opts.collection;
  if (opts.byFilter || opts.id === undefined) {
    throw new UsageError('--interactive edits one record: give its id', `catalog ${name} update <id> --interactive (find ids with catalog ${name} list)`);
  }
  requireTerminal(ctx, `catalog ${name} update ${opts.id} FIELD=VALUE... (the fields: catalog ${name} describe)`);
  const ask = asker ?? inquirerAsker(ctx.io.stdin.stream, ctx.io.stderr);
  const table = await ctx.table(name);
  const presets = parseAssignments(opts.presets ?? [], table, ctx.removedFields(name));
  const singular = singularOf(name);
  const current = await fetchCurrent(ctx, table, opts.id);
  const s = ctx.style();

  await ctx.io.stderr.write(s.dim(`Editing ${singular} ${opts.id}: Enter keeps the current value, Tab edits it, Backspace then Enter empties it. Nothing is sent until you confirm.\n`));
  const changes: Record<string, unknown> = {};
  const rows: SummaryRow[] = [];
  let cancelled = false;
  await cancellable(async () => {
    const askable = askableFields(table);
    const fields = await chooseFields(ask, ctx, askable, 'update', (f) => f.name in presets);
    for (const field of fields) {
      const initial = field.name in presets ? { value: presets[field.name], given: true } : { value: current[field.name], given: false };
      const answer = await askField(ask, ctx, field, 'update', initial, current[field.name], { ...current, ...changes }, name);
      if (answer === undefined || sameValue(answer.value, current[field.name])) continue;
      changes[field.name] = answer.value;
      setRow(rows, { field: field.name, before: current[field.name], after: answer.value, shown: answer.shown, shownBefore: answer.shownBefore });
      const copy = nameCopyOf(table, field);
      if (copy && answer.name !== undefined && !(copy in presets) && !sameValue(answer.name, current[copy])) {
        changes[copy] = answer.name;
        setRow(rows, { field: copy, before: current[copy], after: answer.name });
      }
    }
    if (rows.length === 0) {
      cancelled = true;
      return;
    }
    await ctx.io.stderr.write(`\n${await measured(() => renderSummary(`Changes to ${singular} ${opts.id}:`, rows, s, ctx.io.stderr.columns))}`);
    if (!(await confirmOrEsc(ask, 'Save these changes?'))) throw new Cancelled();
  }).catch((err: unknown) => {
    if (!(err instanceof Cancelled)) throw err;
    cancelled = true;
  });
  if (cancelled) {
    await ctx.note('Nothing changed; nothing was sent.');
    return;
  }
  const pairs = Object.entries(changes).map(([k, v]) => `${k}:=${JSON.stringify(v)}`);
  await runUpdate({ collection: name, id: opts.id, pairs }, ctx);
}

/** The user said no at the summary. */
class Cancelled extends Error {}

/**
 * Runs the questions. A "no" (or Esc) at the summary comes out as Cancelled (the caller says
 * "Nothing added", exit 0); Ctrl-C ends the command as an interrupt (exit 130), nothing sent.
 */
async function cancellable(fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof Cancelled) throw err;
    if (isPromptAbort(err)) throw new Cancelled();
    if (isPromptCancel(err)) throw new Interrupted('cancelled: nothing was sent');
    throw err;
  }
}

/** The record as it is now (read directly, so --dry-run prints only the write). */
async function fetchCurrent(ctx: Context, table: TableDef, id: string): Promise<Record<string, unknown>> {
  const query = compileQuery({ where: [byId(table, id)], order: [], page: [] });
  const spinner = startSpinner(ctx.io.stderr, `Reading ${singularOf(table.name)} ${id}`);
  try {
    const { client } = await ctx.endpoint();
    const res = await client.request({ method: 'GET', path: `/${table.name}`, query, headers: { accept: 'application/json' } });
    const row = (JSON.parse(res.body || '[]') as Array<Record<string, unknown>>)[0];
    if (!row) throw new NotFoundError(`${singularOf(table.name)} ${id} not found in ${table.name}`);
    return row;
  } finally {
    spinner.stop();
  }
}

/** All the fields of a short table; for a long one, the fields the user picks from a list first. */
async function chooseFields(ask: Asker, ctx: Context, askable: ColumnDef[], mode: 'add' | 'update', checked: (f: ColumnDef) => boolean): Promise<ColumnDef[]> {
  if (askable.length <= MANY_FIELDS) return askable;
  const s = ctx.style();
  const picked = await ask.checkbox<string>({
    message: mode === 'add' ? 'Which fields do you want to fill in? (space picks, a picks all, Enter goes on)' : 'Which fields do you want to change? (space picks, Enter goes on)',
    // The suggested fields lead the list, so the usual case is a single Enter.
    choices: [...askable.filter(checked), ...askable.filter((f) => !checked(f))].map((f) => ({ value: f.name, name: `${f.name} ${s.dim(typeLabel(f))}`, checked: checked(f) })),
    pageSize: 15,
  });
  return askable.filter((f) => picked.includes(f.name));
}

function typeLabel(f: ColumnDef): string {
  return f.foreignKey ? `→ ${f.foreignKey.table}` : f.type;
}

/** An answer: the value to send, and how to show it in the summary. */
interface Answer {
  value: unknown;
  shown?: string;
  shownBefore?: string;
  /** The picked record's name (a reference), for the text field that copies it. */
  name?: string;
}

/**
 * Asks for one field with the prompt its type calls for. Returns undefined when the user kept
 * the default (add) or the current value (update).
 */
async function askField(
  ask: Asker,
  ctx: Context,
  field: ColumnDef,
  mode: 'add' | 'update',
  initial?: { value: unknown; given: boolean },
  current?: unknown,
  answers: Record<string, unknown> = {},
  collection = '',
): Promise<Answer | undefined> {
  try {
    const link = linkFieldKind(collection, field.name);
    if (link) return await askLinkField(ask, ctx, field, link, mode, initial?.value, current);
    return await askFieldOnce(ask, ctx, field, mode, initial, current, answers);
  } catch (err) {
    // Esc cancels this question only: the field keeps its default (add) or its value (update).
    if (isPromptAbort(err)) {
      await ctx.note(ctx.style().dim(`  ${field.name}: skipped (Esc)`));
      return undefined;
    }
    throw err;
  }
}

async function askFieldOnce(
  ask: Asker,
  ctx: Context,
  field: ColumnDef,
  mode: 'add' | 'update',
  initial: { value: unknown; given: boolean } | undefined,
  current: unknown,
  answers: Record<string, unknown>,
): Promise<Answer | undefined> {
  const s = ctx.style();
  const kind = promptKind(field);
  const note = mode === 'add' && !initial?.given ? defaultNote(field) : null;
  const message = `${field.name} ${s.dim(typeLabel(field))}${note ? s.dim(` · ${note}`) : ''}`;
  const start = initial?.value;

  switch (kind) {
    case 'boolean': {
      const def = typeof start === 'boolean' ? start : booleanDefault(field);
      const v = await ask.confirm({ message, default: def });
      if (mode === 'add' && !initial?.given && v === booleanDefault(field)) return undefined;
      return { value: v };
    }
    case 'reference':
      return askReference(ask, ctx, field, mode, message, start, current, scopeOf(field, answers));
    case 'json':
      return askJson(ask, ctx, field, mode, start);
    default: {
      const now = ctx.clock.now();
      const text = await ask.input({
        message,
        default: valueText(start) || undefined,
        validate: kind === 'date' ? (v) => validateDate(v, now) : validatorFor(kind),
        transformer: kind === 'date' ? (v, final) => (final ? v : dateHint(v, s, now)) : undefined,
      });
      if (mode === 'add' && text === '' && !initial?.given) return undefined;
      if (mode === 'update' && text === valueText(current)) return undefined;
      // a relative date (today, +7d) is stored as the day it means now
      const typed = kind === 'date' ? (resolveRelativeDate(text, 'date', now) ?? text) : text;
      return { value: answerValue(kind, typed) };
    }
  }
}

function validatorFor(kind: PromptKind): ((v: string) => true | string) | undefined {
  if (kind === 'date') return validateDate;
  if (kind === 'uuid') return validateUuid;
  if (kind === 'timestamp' || kind === 'integer' || kind === 'number') return (v) => validateScalar(kind, v);
  return undefined;
}

/** The date as typed, followed by what is still missing or wrong, or the day a relative date means (validation while typing). */
function dateHint(v: string, s: ReturnType<Context['style']>, now: number): string {
  const f = dateFeedback(v, now);
  const day = resolveRelativeDate(v, 'date', now);
  if (f === null) return v === '' ? v : day ? `${s.green(v)} ${s.dim(`→ ${day}`)}` : s.green(v);
  return `${v} ${f === 'YYYY-MM-DD' ? s.dim('YYYY-MM-DD') : s.red(f)}`;
}

const NONE = '\u0000none';
const KEEP = '\u0000keep';

/** A foreign key chosen by name from a searchable list of the referenced collection. */
async function askReference(
  ask: Asker,
  ctx: Context,
  field: ColumnDef,
  mode: 'add' | 'update',
  message: string,
  start: unknown,
  current: unknown,
  scope?: { field: string; value: string },
): Promise<Answer | undefined> {
  const s = ctx.style();
  const target = field.foreignKey!.table;
  let finder: ReturnType<typeof referenceFinder>;
  let first: Reference[];
  let startRef: Reference | null = null;
  const spinner = startSpinner(ctx.io.stderr, `Loading ${target}`);
  try {
    finder = referenceFinder(ctx, await ctx.table(target), scope);
    first = await finder.search(undefined);
    if (typeof start === 'string' && start) startRef = (await finder.byId(start)) ?? { id: start, name: '(not found)' };
  } catch (err) {
    spinner.stop();
    // Without the list, fall back to typing the id (still validated).
    await ctx.warn(`cannot list ${target} (${(err as Error).message}); type the id instead`);
    const text = await ask.input({ message, default: valueText(start) || undefined, validate: validateUuid });
    if (text === valueText(current) && mode === 'update') return undefined;
    if (text === '' && mode === 'add') return undefined;
    return { value: answerValue('uuid', text) };
  }
  spinner.stop();
  const label = (r: Reference) => `${r.name}${r.detail ? ` (${r.detail})` : ''}`;
  const shown = (r: Reference) => `${label(r)} ${s.dim(`${r.id.slice(0, 8)}…`)}`;
  if (first.length === 0 && !startRef) {
    await ctx.note(s.dim(`  ${field.name}: there are no ${target} yet, so it stays empty (add one with: catalog ${target} add)`));
    return undefined;
  }
  const toChoice = (r: Reference): Choice<string> => ({ value: r.id, name: label(r), description: r.id });
  const fixed: Choice<string>[] = [
    ...(startRef ? [{ value: KEEP, name: `${mode === 'update' && start === current ? 'keep' : 'use'}: ${label(startRef)}`, description: startRef.id }] : []),
    { value: NONE, name: s.dim('(none)'), description: `leave ${field.name} empty` },
  ];
  const picked = await ask.search<string>({
    message: `${message} ${s.dim('· type to search by name')}`,
    pageSize: 10,
    source: async (term, signal) => (term ? (await finder.search(term, signal)).map(toChoice) : [...fixed, ...first.map(toChoice)]),
  });
  const byIdText = async (id: string | null | undefined) => {
    if (!id) return undefined;
    const r = id === startRef?.id ? startRef : [...first].find((x) => x.id === id) ?? (await finder.byId(id).catch(() => null));
    return r ? shown(r) : id;
  };
  const before = await byIdText(typeof current === 'string' ? current : null);
  if (picked === KEEP) {
    if (mode === 'update' && start === current) return undefined;
    return { value: startRef!.id, shown: shown(startRef!), shownBefore: before, name: startRef!.full ?? startRef!.name };
  }
  if (picked === NONE) {
    if (mode === 'add') return undefined;
    return { value: null, shownBefore: before };
  }
  const chosen = [...first].find((x) => x.id === picked) ?? (await finder.byId(picked).catch(() => null));
  return { value: picked, shown: await byIdText(picked), shownBefore: before, ...(chosen ? { name: chosen.full ?? chosen.name } : {}) };
}

/**
 * What narrows a reference list by the answers so far: a release's subgenres are those of the
 * genre picked for it (subgenres carry their genre's name).
 */
function scopeOf(field: ColumnDef, answers: Record<string, unknown>): { field: string; value: string } | undefined {
  if (field.foreignKey?.table !== 'subgenres') return undefined;
  const genre = answers.genre;
  return typeof genre === 'string' && genre !== '' ? { field: 'genre', value: genre } : undefined;
}

/** The text field that copies a reference's name (`label` for `label_id`), when the table has one. */
function nameCopyOf(table: TableDef, field: ColumnDef): string | undefined {
  const target = field.foreignKey?.table;
  if (!target) return undefined;
  const copy = singularOf(target);
  return table.columns.some((f) => f.name === copy && typeKind(f.type) === 'text') ? copy : undefined;
}

/** A link field (a release's tracks, a track's credits): picked one by one by title, ISRC or name. */
async function askLinkField(ask: Asker, ctx: Context, field: ColumnDef, kind: 'tracks' | 'artists', mode: 'add' | 'update', start: unknown, current: unknown): Promise<Answer | undefined> {
  const s = ctx.style();
  const answer = await askLinks(ask, ctx, kind, `${field.name} ${s.dim(kind === 'tracks' ? '→ tracks' : '→ artists')}`, start);
  if (answer === undefined || (mode === 'update' && sameValue(answer.value, current))) return undefined;
  return { value: answer.value, shown: answer.shown };
}

/** A JSON document: confirmed first (so the editor opens only when wanted), then edited and checked. */
async function askJson(ask: Asker, ctx: Context, field: ColumnDef, mode: 'add' | 'update', start: unknown): Promise<Answer | undefined> {
  const s = ctx.style();
  const now = start === null || start === undefined ? '' : JSON.stringify(start);
  const preview = now.length > 40 ? `${now.slice(0, 39)}…` : now;
  const question =
    mode === 'add' && !now ? `${field.name} ${s.dim(field.type)} · write it as JSON in your editor?` : `${field.name} ${s.dim(field.type)} ${s.dim(`now ${preview || '(empty)'}`)} · edit it in your editor?`;
  if (!(await ask.confirm({ message: question, default: false }))) {
    return mode === 'add' && now ? { value: start } : undefined;
  }
  const text = await ask.editor({
    message: `${field.name} as JSON (an empty file means no value)`,
    default: start === null || start === undefined ? '' : `${JSON.stringify(start, null, 2)}\n`,
    validate: validateJson,
    postfix: '.json',
  });
  return { value: answerValue('json', text) };
}
