import { BACKSLASH, QUOTE } from '../format/byte-codes.js';
// the canonical UUID form (lowercase, 8-4-4-4-12), migration 5's UUID_RE
import { canonicalUuid } from '../schema/codecs.js';

/**
 * Whether a COPY body's credit cell is a plain credit list, read from its bytes (issue 36): the
 * quoted CSV field of a JSON array of objects with an `id` in canonical UUID form, a `name` that is
 * not blank, a text `role` and a `share` from 0 to 100, nothing else. It answers true only where
 * link-batch.ts's JSON route (JSON.parse and plainCredit) surely says plain too, and null for
 * anything it does not read to the end (an escape in a string, a number beyond `0`…`100.5`-like
 * forms, a repeated key, a string in a field without doubled quotes): the JSON route then decides. Reading bytes in place
 * builds no string or object per cell: the JSON route cost ~30 ms of every 5,000-row batch on the
 * embedded store's only thread, this ~3 ms.
 */


/** The scanner's state over one field: `i` the position, `end` its end; a JSON `"` is CSV's `""`. */
class Cell {
  i: number;
  constructor(
    private readonly b: Uint8Array,
    from: number,
    private readonly end: number,
    private readonly escaped: boolean,
  ) {
    this.i = from;
  }

  ws(): void {
    const b = this.b;
    while (this.i < this.end && (b[this.i] === 0x20 || b[this.i] === 0x09 || b[this.i] === 0x0a || b[this.i] === 0x0d)) this.i++;
  }

  /** Takes byte `c` (after whitespace) if it is next. */
  take(c: number): boolean {
    this.ws();
    if (this.i < this.end && this.b[this.i] === c) {
      this.i++;
      return true;
    }
    return false;
  }

  /** Takes a JSON quote (`""` in the field; a field without them holds no string). */
  quote(): boolean {
    if (this.escaped && this.i + 1 < this.end && this.b[this.i] === QUOTE && this.b[this.i + 1] === QUOTE) {
      this.i += 2;
      return true;
    }
    return false;
  }

  /** The last string's content: [`from`, `to`) of the field's bytes. */
  from = 0;
  to = 0;

  /** A JSON string without escapes or control bytes: its content goes to `from` and `to`. */
  string(): boolean {
    this.ws();
    if (!this.quote()) return false;
    const from = this.i;
    const b = this.b;
    while (this.i < this.end) {
      const c = b[this.i];
      if (c === QUOTE) {
        this.from = from;
        this.to = this.i;
        return this.quote();
      }
      if (c === BACKSLASH || c < 0x20) return false;
      this.i++;
    }
    return false;
  }

  /** A JSON number of the forms `0`, `[1-9][0-9]*`, optionally `.` and digits (at most 8 bytes): its value, or null. */
  number(): number | null {
    this.ws();
    const b = this.b;
    const from = this.i;
    let v = 0;
    if (b[this.i] === 0x30) this.i++;
    else if (b[this.i] >= 0x31 && b[this.i] <= 0x39) while (this.i < this.end && b[this.i] >= 0x30 && b[this.i] <= 0x39) v = v * 10 + (b[this.i++] - 0x30);
    else return null;
    if (b[this.i] === 0x2e) {
      this.i++;
      let scale = 0.1;
      const digits = this.i;
      while (this.i < this.end && b[this.i] >= 0x30 && b[this.i] <= 0x39) {
        v += (b[this.i++] - 0x30) * scale;
        scale /= 10;
      }
      if (this.i === digits) return null;
    }
    return this.i - from <= 8 ? v : null;
  }
}

const KEYS = ['id', 'name', 'role', 'share'] as const;

/** Which of KEYS the bytes [from, to) spell, or -1. */
function keyOf(b: Uint8Array, from: number, to: number): number {
  outer: for (let k = 0; k < KEYS.length; k++) {
    const key = KEYS[k];
    if (to - from !== key.length) continue;
    for (let j = 0; j < key.length; j++) if (b[from + j] !== key.charCodeAt(j)) continue outer;
    return k;
  }
  return -1;
}

/** Where a plain credit list's ids and names are told: the byte where a credit's id starts (36 bytes), and its name's bytes. */
export type CreditSink = (body: Uint8Array, id: number, nameFrom: number, nameTo: number) => void;

/** One credit object, the `{` taken: true when plain, null when in doubt. `sink` hears of it when it has an id. */
function credit(cell: Cell, b: Uint8Array, sink?: CreditSink): true | null {
  let seen = 0;
  let id = -1;
  let nameFrom = -1;
  let nameTo = -1;
  do {
    if (!cell.string()) return null;
    const k = keyOf(b, cell.from, cell.to);
    if (k < 0 || seen & (1 << k) || !cell.take(0x3a)) return null;
    seen |= 1 << k;
    if (KEYS[k] === 'share') {
      const v = cell.number();
      if (v === null || v > 100) return null;
      continue;
    }
    if (!cell.string()) return null;
    if (KEYS[k] === 'id') {
      if (!canonicalUuid(b, cell.from, cell.to)) return null;
      id = cell.from;
    }
    if (KEYS[k] === 'name') {
      let blank = true;
      for (let j = cell.from; j < cell.to && blank; j++) blank = b[j] === 0x20;
      if (blank) return null;
      nameFrom = cell.from;
      nameTo = cell.to;
    }
  } while (cell.take(0x2c));
  if (nameFrom < 0 || !cell.take(0x7d)) return null;
  if (id >= 0 && sink) sink(b, id, nameFrom, nameTo);
  return true;
}

/**
 * Whether the field [from, to) of `body` (a quoted CSV field's content; `escaped`: it holds `""`)
 * is a plain credit list: true, or null when the JSON route must decide. `sink` hears of each
 * credit with an id as it is read (a cell in doubt may have told some before it stopped).
 */
export function plainCreditsCell(body: Uint8Array, from: number, to: number, escaped: boolean, sink?: CreditSink): true | null {
  const cell = new Cell(body, from, to, escaped);
  if (!cell.take(0x5b)) return null;
  if (!cell.take(0x5d)) {
    do {
      if (!cell.take(0x7b) || credit(cell, body, sink) === null) return null;
    } while (cell.take(0x2c));
    if (!cell.take(0x5d)) return null;
  }
  cell.ws();
  return cell.i === to ? true : null;
}
