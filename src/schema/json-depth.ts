import { BACKSLASH, QUOTE } from '../format/byte-codes.js';

/**
 * How deeply a jsonb value may nest, and the iterative checks every input path uses (request
 * bodies, COPY cells, import files).
 *
 * PostgreSQL has no jsonb depth limit of its own: its parser recurses until `max_stack_depth`
 * stops it (54001, at roughly 10k levels with the default 2 MB), and PGlite's WebAssembly stack
 * gives way sooner and less gracefully ("bad buffer ID", or a server that spins). No catalog value
 * needs more than a handful of levels, so the limit is a round 512: far above any real document,
 * far below where either database (or a recursive walk in this code) gets into trouble.
 */
export const MAX_JSON_DEPTH = 512;

const OPEN_ARRAY = 91;
const CLOSE_ARRAY = 93;
const OPEN_OBJECT = 123;
const CLOSE_OBJECT = 125;

/**
 * Where JSON text `bytes[from, to)` first nests arrays and objects deeper than `limit`, or -1.
 * One pass, no recursion, no allocation; brackets inside strings do not count, and a string is
 * skipped with `indexOf` (memchr speed: most of a body's bytes are string content). `quote` is 2
 * for the content of a quoted CSV field, where every `"` of the JSON text is written twice.
 * It does not check the syntax (the parser that follows does).
 * @example jsonTooDeep(Buffer.from('[[1]]'), 1) // 1
 */
export function jsonTooDeep(bytes: Uint8Array, limit: number, from = 0, to = bytes.length, quote: 1 | 2 = 1): number {
  let depth = 0;
  for (let i = from; i < to; i++) {
    const c = bytes[i];
    if (c === QUOTE) {
      const end = stringEnd(bytes, i + quote, to, quote);
      if (end < 0) return -1; // an unclosed string: no bracket after it counts
      i = end + quote - 1;
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > limit) return i;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) depth--;
  }
  return -1;
}

/** The closing quote of a string whose content starts at `at`: the first `"` not escaped by an odd run of backslashes, or -1. */
function stringEnd(bytes: Uint8Array, at: number, to: number, quote: 1 | 2): number {
  for (let j = at; ; j += quote) {
    j = bytes.indexOf(QUOTE, j);
    if (j < 0 || j >= to) return -1;
    let backslashes = 0;
    while (j - backslashes - 1 >= at && bytes[j - backslashes - 1] === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return j;
  }
}

/** `jsonTooDeep` for text (an import cell, an in-process body). */
export function jsonTextTooDeep(text: string, limit = MAX_JSON_DEPTH): boolean {
  // a string this short cannot nest past the limit: skip the copy to bytes
  if (text.length <= limit) return false;
  return jsonTooDeep(Buffer.from(text), limit) >= 0;
}

/**
 * Whether a parsed value (from a JSON or YAML file) nests arrays and objects deeper than `limit`.
 * Walks with an explicit stack, so a value nested 100k deep is answered, not a stack overflow.
 * @example valueTooDeep([[1]], 1) // true
 */
export function valueTooDeep(value: unknown, limit = MAX_JSON_DEPTH): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (d + 1 > limit) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v as Record<string, unknown>)) {
      if (child !== null && typeof child === 'object') stack.push([child, d + 1]);
    }
  }
  return false;
}

/** The words a refusal uses, so every path says the same. */
export function tooDeepMessage(limit = MAX_JSON_DEPTH): string {
  return `JSON nested too deeply: a value may nest at most ${limit} levels of arrays and objects`;
}

/**
 * JSON.stringify that also writes a value nested past V8's recursion limit (a rejected row's cell
 * goes back to the user as it came, however deep): the built-in first, an explicit stack after it.
 * @example stringifyDeep({ a: [1] }) // '{"a":[1]}'
 */
export function stringifyDeep(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
  }
  const out: string[] = [];
  const stack: Array<{ entries: Array<[string | null, unknown]>; at: number; close: string }> = [];
  const emit = (v: unknown): void => {
    if (v === null || typeof v !== 'object') out.push(JSON.stringify(v) ?? 'null');
    else if (Array.isArray(v)) {
      out.push('[');
      stack.push({ entries: v.map((x) => [null, x]), at: 0, close: ']' });
    } else {
      out.push('{');
      const entries = Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined && typeof x !== 'function');
      stack.push({ entries, at: 0, close: '}' });
    }
  };
  emit(value);
  while (stack.length > 0) {
    const frame = stack[stack.length - 1];
    if (frame.at >= frame.entries.length) {
      out.push(frame.close);
      stack.pop();
      continue;
    }
    const [key, v] = frame.entries[frame.at++];
    if (frame.at > 1) out.push(',');
    if (key !== null) out.push(`${JSON.stringify(key)}:`);
    emit(v);
  }
  return out.join('');
}
