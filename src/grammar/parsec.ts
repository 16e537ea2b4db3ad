/**
 * A tiny Parsec (Haskell parsec-3) work-alike. PostgREST's query-string parser is written with
 * Parsec, and its error texts (`unexpected "0" expecting "not" or operator (eq, gt, ...)`,
 * column numbers) fall out of Parsec's consumed/empty and error-merging rules. Reproducing those
 * rules here lets the grammar in parse.ts mirror PostgREST's combinators and give the same errors.
 */

/** Parsec message kinds, in Parsec's sort order. */
export const MsgKind = { SysUnExpect: 0, UnExpect: 1, Expect: 2, Message: 3 } as const;
export type MsgKind = (typeof MsgKind)[keyof typeof MsgKind];

/** `text` is final; `ch` is a character still to be shown (`"c"` for SysUnExpect, `'c'` for UnExpect) — formatting is deferred because most errors are discarded. */
export interface Msg { kind: MsgKind; text?: string; ch?: string }

/** The display text of a message. */
export function msgText(m: Msg): string {
  if (m.text !== undefined) return m.text;
  return m.kind === MsgKind.UnExpect ? hsShowChar(m.ch!) : hsShowString(m.ch!);
}
export interface PError { pos: number; msgs: Msg[] }

export type Reply<T> =
  | { ok: true; consumed: boolean; value: T; pos: number; err: PError }
  | { ok: false; consumed: boolean; err: PError };

/** Input is an array of code points, so columns count characters as Haskell does. */
export type Parser<T> = (input: readonly string[], pos: number) => Reply<T>;

const unknown = (pos: number): PError => ({ pos, msgs: [] });
const isUnknown = (e: PError): boolean => e.msgs.length === 0;

/** Parsec's mergeError: the error further along wins; equal positions concatenate messages. */
export function mergeError(e1: PError, e2: PError): PError {
  if (e2.msgs.length === 0 && e1.msgs.length > 0) return e1;
  if (e1.msgs.length === 0 && e2.msgs.length > 0) return e2;
  if (e1.pos === e2.pos) return { pos: e1.pos, msgs: [...e1.msgs, ...e2.msgs] };
  return e1.pos > e2.pos ? e1 : e2;
}

function setExpect(err: PError, label: string): PError {
  return { pos: err.pos, msgs: [{ kind: MsgKind.Expect, text: label }, ...err.msgs.filter((m) => m.kind !== MsgKind.Expect)] };
}

// ---------------------------------------------------------------------------------------------
// Haskell `show` for characters and strings (Parsec uses it in "unexpected" messages).

const ASCII_NAMES = ['NUL', 'SOH', 'STX', 'ETX', 'EOT', 'ENQ', 'ACK', 'a', 'b', 't', 'n', 'v', 'f', 'r', 'SO', 'SI',
  'DLE', 'DC1', 'DC2', 'DC3', 'DC4', 'NAK', 'SYN', 'ETB', 'CAN', 'EM', 'SUB', 'ESC', 'FS', 'GS', 'RS', 'US'];

function showLitChar(c: string): string {
  const cp = c.codePointAt(0)!;
  if (cp > 0x7f) return `\\${cp}`;
  if (cp === 0x7f) return '\\DEL';
  if (cp === 0x5c) return '\\\\';
  if (cp < 0x20) return `\\${ASCII_NAMES[cp]}`;
  return c;
}

/** Haskell `show` of a String: `"a\"b"`, `"\233"`. */
export function hsShowString(s: string): string {
  const cps = Array.from(s);
  let out = '"';
  cps.forEach((c, i) => {
    if (c === '"') { out += '\\"'; return; }
    let lit = showLitChar(c);
    const next = cps[i + 1];
    // Haskell's \& separators keep a numeric escape from swallowing a following digit (and \SO from H).
    if (next !== undefined && ((/^\\\d+$/.test(lit) && /[0-9]/.test(next)) || (lit === '\\SO' && next === 'H'))) lit += '\\&';
    out += lit;
  });
  return out + '"';
}

/** Haskell `show` of a Char: `'t'`, `'\''`, `'"'`. */
export function hsShowChar(c: string): string {
  if (c === "'") return "'\\''";
  return `'${showLitChar(c)}'`;
}

/** Haskell Data.Char.isSpace (used by Text.strip). */
export function hsIsSpace(c: string): boolean {
  const n = c.codePointAt(0)!;
  return n === 0x20 || (n >= 0x09 && n <= 0x0d) || n === 0xa0 || n === 0x1680 || (n >= 0x2000 && n <= 0x200a) || n === 0x202f || n === 0x205f || n === 0x3000;
}

/** Data.Text.strip. */
export function hsStrip(s: string): string {
  const cps = Array.from(s);
  let a = 0;
  let b = cps.length;
  while (a < b && hsIsSpace(cps[a])) a++;
  while (b > a && hsIsSpace(cps[b - 1])) b--;
  return cps.slice(a, b).join('');
}

// ---------------------------------------------------------------------------------------------
// Primitives

export const pure = <T>(value: T): Parser<T> => (_i, pos) => ({ ok: true, consumed: false, value, pos, err: unknown(pos) });

/** parserZero / mzero: fails without a message. */
export const zero = <T>(): Parser<T> => (_i, pos) => ({ ok: false, consumed: false, err: unknown(pos) });

/** `unexpected msg` */
export const unexpected = <T>(text: string): Parser<T> => (_i, pos) =>
  ({ ok: false, consumed: false, err: { pos, msgs: [{ kind: MsgKind.UnExpect, text }] } });

export const satisfy = (pred: (c: string) => boolean): Parser<string> => (input, pos) => {
  if (pos >= input.length) return { ok: false, consumed: false, err: { pos, msgs: [{ kind: MsgKind.SysUnExpect, text: '' }] } };
  const c = input[pos];
  if (!pred(c)) return { ok: false, consumed: false, err: { pos, msgs: [{ kind: MsgKind.SysUnExpect, ch: c }] } };
  return { ok: true, consumed: true, value: c, pos: pos + 1, err: unknown(pos + 1) };
};

/**
 * `many (satisfy pred)` (or `many1` when min is 1) as one fast primitive returning the string.
 * `expects` are the labels the character parser carries (e.g. `letter`, `digit`), so the error
 * left behind where it stops is the one Parsec would leave.
 */
export const takeWhile = (pred: (c: string) => boolean, min: 0 | 1 = 0, expects: readonly string[] = []): Parser<string> => (input, pos) => {
  let end = pos;
  while (end < input.length && pred(input[end])) end++;
  const stop: Msg = end < input.length ? { kind: MsgKind.SysUnExpect, ch: input[end] } : { kind: MsgKind.SysUnExpect, text: '' };
  const err: PError = { pos: end, msgs: [stop, ...expects.map((text) => ({ kind: MsgKind.Expect, text }))] };
  if (end - pos < min) return { ok: false, consumed: false, err };
  return { ok: true, consumed: end > pos, value: input.slice(pos, end).join(''), pos: end, err };
};

/** `string s` with Parsec's `tokens` semantics: errors are reported at the start position. */
export const string = (s: string): Parser<string> => {
  const want = Array.from(s);
  const expect = hsShowString(s);
  return (input, pos) => {
    if (want.length === 0) return { ok: true, consumed: false, value: '', pos, err: unknown(pos) };
    for (let i = 0; i < want.length; i++) {
      const x = input[pos + i];
      if (x !== want[i]) {
        const err: PError = { pos, msgs: [{ kind: MsgKind.Expect, text: expect }, x === undefined ? { kind: MsgKind.SysUnExpect, text: '' } : { kind: MsgKind.SysUnExpect, ch: x }] };
        return { ok: false, consumed: i > 0, err };
      }
    }
    const end = pos + want.length;
    return { ok: true, consumed: true, value: s, pos: end, err: unknown(end) };
  };
};

export const label = <T>(p: Parser<T>, text: string): Parser<T> => (input, pos) => {
  const r = p(input, pos);
  if (r.consumed) return r;
  if (!r.ok) return { ok: false, consumed: false, err: setExpect(r.err, text) };
  return isUnknown(r.err) ? r : { ok: true, consumed: false, value: r.value, pos: r.pos, err: setExpect(r.err, text) };
};

export const char = (c: string): Parser<string> => label(satisfy((x) => x === c), hsShowString(c));
export const oneOf = (cs: string): Parser<string> => satisfy((x) => cs.includes(x));
export const noneOf = (cs: string): Parser<string> => satisfy((x) => !cs.includes(x));
export const anyChar: Parser<string> = satisfy(() => true);
const UNICODE_LETTER = new RegExp('^\\p{L}$', 'u');
/** Haskell isAlpha (Unicode letters). */
export const isLetter = (c: string): boolean =>
  (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c.charCodeAt(0) > 0x7f && UNICODE_LETTER.test(c));
export const letter: Parser<string> = label(satisfy(isLetter), 'letter');
export const digit: Parser<string> = label(satisfy((c) => c >= '0' && c <= '9'), 'digit');

/** `eof = notFollowedBy anyToken <?> "end of input"` (anyToken does not advance the position). */
export const eof: Parser<null> = (input, pos) => {
  if (pos < input.length) {
    return { ok: false, consumed: false, err: { pos, msgs: [{ kind: MsgKind.Expect, text: 'end of input' }, { kind: MsgKind.UnExpect, ch: input[pos] }] } };
  }
  return { ok: true, consumed: false, value: null, pos, err: { pos, msgs: [{ kind: MsgKind.Expect, text: 'end of input' }, { kind: MsgKind.SysUnExpect, text: '' }] } };
};

// ---------------------------------------------------------------------------------------------
// Combinators

/** Combine the reply of a first parser with the reply of what follows it (Parsec's `>>=` bookkeeping). */
function follow<A, B, C>(r: Reply<A> & { ok: true }, q: Reply<B>, combine: (a: A, b: B) => C): Reply<C> {
  if (q.consumed) return q.ok ? { ok: true, consumed: true, value: combine(r.value, q.value), pos: q.pos, err: q.err } : q;
  const consumed = r.consumed;
  const err = isUnknown(r.err) ? q.err : mergeError(r.err, q.err);
  return q.ok ? { ok: true, consumed, value: combine(r.value, q.value), pos: q.pos, err } : { ok: false, consumed, err };
}
const second = <A, B>(_a: A, b: B): B => b;

/** Monadic bind with Parsec's error bookkeeping. */
export const bind = <A, B>(p: Parser<A>, f: (a: A) => Parser<B>): Parser<B> => (input, pos) => {
  const r = p(input, pos);
  if (!r.ok) return r;
  return follow(r, f(r.value)(input, r.pos), second);
};

/** `p` then `q`, combining both values. */
export const andThen = <A, B, C>(p: Parser<A>, q: Parser<B>, combine: (a: A, b: B) => C): Parser<C> => (input, pos) => {
  const r = p(input, pos);
  if (!r.ok) return r;
  return follow(r, q(input, r.pos), combine);
};

export const map = <A, B>(p: Parser<A>, f: (a: A) => B): Parser<B> => (input, pos) => {
  const r = p(input, pos);
  return r.ok ? { ok: true, consumed: r.consumed, value: f(r.value), pos: r.pos, err: r.err } : r;
};

/** `p *> q` */
export const right = <A, B>(p: Parser<A>, q: Parser<B>): Parser<B> => andThen(p, q, second);
/** `p <* q` */
export const left = <A, B>(p: Parser<A>, q: Parser<B>): Parser<A> => andThen(p, q, (a) => a);

/** Sequence, collecting values. */
export function seq<A, B>(a: Parser<A>, b: Parser<B>): Parser<[A, B]>;
export function seq<A, B, C>(a: Parser<A>, b: Parser<B>, c: Parser<C>): Parser<[A, B, C]>;
export function seq(...ps: Parser<unknown>[]): Parser<unknown[]> {
  return ps.reduce<Parser<unknown[]>>((acc, p) => andThen(acc, p, (xs, x) => [...xs, x]), pure([]));
}

/** `p <|> q <|> ...` */
export const alt = <T>(...ps: Parser<T>[]): Parser<T> => (input, pos) => {
  let err: PError | null = null;
  for (const p of ps) {
    const r = p(input, pos);
    if (r.consumed) return r;
    const merged: PError = err === null ? r.err : mergeError(err, r.err);
    if (r.ok) return { ok: true, consumed: false, value: r.value, pos: r.pos, err: merged };
    err = merged;
  }
  return { ok: false, consumed: false, err: err ?? unknown(pos) };
};

export const attempt = <T>(p: Parser<T>): Parser<T> => (input, pos) => {
  const r = p(input, pos);
  return !r.ok && r.consumed ? { ok: false, consumed: false, err: r.err } : r;
};

export const lookAhead = <T>(p: Parser<T>): Parser<T> => (input, pos) => {
  const r = p(input, pos);
  return r.ok ? { ok: true, consumed: false, value: r.value, pos, err: unknown(pos) } : r;
};

/** `notFollowedBy p` where p yields a Char (shown as `'c'`). */
export const notFollowedBy = (p: Parser<string>): Parser<null> => (input, pos) => {
  const r = attempt(p)(input, pos);
  if (r.ok) return { ok: false, consumed: false, err: { pos: r.pos, msgs: [{ kind: MsgKind.UnExpect, ch: r.value }] } };
  return { ok: true, consumed: false, value: null, pos, err: r.err };
};

export const many = <T>(p: Parser<T>): Parser<T[]> => (input, pos) => {
  const acc: T[] = [];
  let cur = pos;
  for (;;) {
    const r = p(input, cur);
    if (r.ok) {
      if (!r.consumed) throw new Error('combinator many is applied to a parser that accepts an empty string');
      acc.push(r.value);
      cur = r.pos;
      continue;
    }
    if (r.consumed) return r;
    return { ok: true, consumed: acc.length > 0, value: acc, pos: cur, err: r.err };
  }
};

export const many1 = <T>(p: Parser<T>): Parser<T[]> => bind(p, (x) => map(many(p), (xs) => [x, ...xs]));
export const option = <T>(def: T, p: Parser<T>): Parser<T> => alt(p, pure(def));
export const optionMaybe = <T>(p: Parser<T>): Parser<T | undefined> => option<T | undefined>(undefined, p);
export const sepBy1 = <T, S>(p: Parser<T>, sep: Parser<S>): Parser<T[]> =>
  bind(p, (x) => map(many(right(sep, p)), (xs) => [x, ...xs]));
export const sepBy = <T, S>(p: Parser<T>, sep: Parser<S>): Parser<T[]> => alt(sepBy1(p, sep), pure<T[]>([]));
export const between = <O, C, T>(open: Parser<O>, close: Parser<C>, p: Parser<T>): Parser<T> => left(right(open, p), close);
export const lazy = <T>(f: () => Parser<T>): Parser<T> => {
  let p: Parser<T> | null = null;
  return (input, pos) => (p ??= f())(input, pos);
};

// ---------------------------------------------------------------------------------------------
// Running and reporting

/** Parsec's showErrorMessages "or" "unknown parse error" "expecting" "unexpected" "end of input", newlines → spaces, stripped. */
export function showErrorMessages(msgs: Msg[]): string {
  if (msgs.length === 0) return 'unknown parse error';
  const sorted = [...msgs].sort((a, b) => a.kind - b.kind);
  const of = (k: MsgKind): string[] => sorted.filter((m) => m.kind === k).map(msgText);
  const sys = of(MsgKind.SysUnExpect);
  const unexp = of(MsgKind.UnExpect);
  const exp = of(MsgKind.Expect);
  const other = of(MsgKind.Message);
  const clean = (xs: string[]): string[] => [...new Set(xs.filter((x) => x !== ''))];
  const commasOr = (xs: string[]): string => {
    const ms = clean(xs);
    if (ms.length === 0) return '';
    if (ms.length === 1) return ms[0];
    return `${clean(ms.slice(0, -1)).join(', ')} or ${ms[ms.length - 1]}`;
  };
  const showMany = (pre: string, xs: string[]): string => {
    const ms = clean(xs);
    if (ms.length === 0) return '';
    return pre === '' ? commasOr(ms) : `${pre} ${commasOr(ms)}`;
  };
  const sysLine = unexp.length > 0 || sys.length === 0 ? '' : sys[0] === '' ? 'unexpected end of input' : `unexpected ${sys[0]}`;
  const lines = clean([sysLine, showMany('unexpected', unexp), showMany('expecting', exp), showMany('', other)]);
  return lines.join(' ').trim();
}

/** Parsec source position of a code-point index (tabs advance to the next multiple of 8). */
export function lineColumn(input: readonly string[], pos: number): { line: number; column: number } {
  let line = 1;
  let column = 1;
  for (let i = 0; i < pos && i < input.length; i++) {
    const c = input[i];
    if (c === '\n') { line++; column = 1; } else if (c === '\t') column = column + 8 - ((column - 1) % 8); else column++;
  }
  return { line, column };
}

export type RunResult<T> = { ok: true; value: T } | { ok: false; message: string; details: string };

/** `P.parse p name text` turned into PostgREST's QPError texts. */
export function run<T>(p: Parser<T>, name: string, text: string): RunResult<T> {
  const input = Array.from(text);
  const r = p(input, 0);
  if (r.ok) return { ok: true, value: r.value };
  const { line, column } = lineColumn(input, r.err.pos);
  return { ok: false, message: `"${name}" (line ${line}, column ${column})`, details: showErrorMessages(r.err.msgs) };
}
