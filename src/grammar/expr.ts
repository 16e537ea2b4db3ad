/**
 * The CLI's `--where EXPR`: PostgREST's own `field=op.value` form, or the short form
 * `field OP value` with OP one of `= != < <= > >= ~ !~` (blanks around OP optional;
 * `~` is a case-insensitive match with `*` wildcards, i.e. `ilike`).
 */
import { GrammarError } from './errors.js';
import { isReservedKey, lastWord, parseFieldPath, parseFilter, parseLogicTree } from './parse.js';
import { OPERATORS, SHORT_OPERATORS } from './operators.js';
import type { Filter, WhereClause } from './types.js';


/** Index of the first operator character outside quotes and `->`/`->>` arrows, or -1. */
function operatorIndex(text: string): number {
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      const close = text.indexOf('"', i + 1);
      if (close < 0) return -1;
      i = close;
    } else if (c === '-' && text[i + 1] === '>') {
      i += text[i + 2] === '>' ? 2 : 1;
    } else if ('=!<>~'.includes(c)) {
      return i;
    }
  }
  return -1;
}

/** PostgREST ignores text after a key's field path; for the CLI a field must be read completely. */
function isCompleteField(key: string): boolean {
  try {
    parseFieldPath(key);
    return true;
  } catch (e) {
    if (e instanceof GrammarError) return false;
    throw e;
  }
}

/** The short operators as help shows them, in the table's order: `= != > >= < <= ~ !~`. */
const SHORT_TOKENS = OPERATORS.flatMap((o) => (o.short ?? []).map((s) => s.token)).join(' ');

function badExpr(text: string, why: string): GrammarError {
  return new GrammarError(`invalid where expression "${text}"`, why, {
    hint: `Use field=op.value (release_date=gte.2024-01-01) or field OP value with OP one of ${SHORT_TOKENS}`,
  });
}

/**
 * Parse a `--where` expression.
 * @example parseWhereExpr('release_date>=2024-01-01') // {path:[], condition:{kind:'filter', op:'gte', value:'2024-01-01', …}}
 * @example parseWhereExpr('labels.name=eq.Verve')     // {path:['labels'], condition:{…op:'eq', value:'Verve'}}
 */
export function parseWhereExpr(text: string): WhereClause {
  const eq = text.indexOf('=');
  // PostgREST form first: `key=[not.]op.value` or `[path.][not.]or=(…)`.
  if (eq > 0) {
    const key = text.slice(0, eq).trim();
    const value = text.slice(eq + 1);
    if (!/[!<>~]$/.test(key)) {
      if (['and', 'or'].includes(lastWord(key))) return parseLogicTree(key, value);
      if (!isReservedKey(key) && isCompleteField(key)) {
        try {
          return parseFilter(key, value);
        } catch (e) {
          if (!(e instanceof GrammarError)) throw e;
          // Not an operator expression: fall through to the short form (`title=Kind of Blue`).
        }
      }
    }
  }
  const at = operatorIndex(text);
  if (at < 0) throw badExpr(text, 'no operator found');
  const rest = text.slice(at);
  const found = SHORT_OPERATORS.find((s) => rest.startsWith(s.token));
  if (found === undefined) throw badExpr(text, `unknown operator at "${rest}"`);
  const { token: sym, op, negated } = found;
  const fieldText = text.slice(0, at).trim();
  if (fieldText === '') throw badExpr(text, 'missing field name before the operator');
  // spaces after the operator are layout (`genre = techno`); trailing ones belong to the value, as
  // in the raw form (`genre=techno ` finds the values stored with that space)
  const value = text.slice(at + sym.length).trimStart();
  let target: ReturnType<typeof parseFieldPath>;
  try {
    target = parseFieldPath(fieldText);
  } catch (e) {
    if (e instanceof GrammarError) throw badExpr(text, `bad field name "${fieldText}": ${e.details ?? e.message}`);
    throw e;
  }
  const condition: Filter = { kind: 'filter', field: target.field, negated, op, value };
  SHORT_FORM.add(condition);
  return { path: target.path, condition };
}

/**
 * The filters written in the short form (`field OP value`). The CLI gives them its own meaning
 * where the raw PostgREST form must stay exactly as written: `~`/`!~` (sent as `ilike`) also
 * ignore accents on text fields, and a filter on an embedded field filters the parent rows.
 */
export const SHORT_FORM = new WeakSet<Filter>();
