import { median } from './stats.js';

/** Collected samples per measurement key; medians and "n/a (reason)" come out of it. */
export class Results {
  constructor() {
    this.samples = new Map();
    this.failures = new Map();
    this.extra = new Map();
  }

  /** Records one sample (a number) for `key`. */
  add(key, value) {
    if (value === null || value === undefined || !Number.isFinite(value)) return;
    if (!this.samples.has(key)) this.samples.set(key, []);
    this.samples.get(key).push(value);
  }

  /** Records why `key` could not be measured (kept only if no sample ever arrives). */
  fail(key, reason) {
    if (!this.failures.has(key)) this.failures.set(key, String(reason).replace(/\s+/g, ' ').slice(0, 140));
  }

  /** Free-form detail for a key (e.g. rows returned), last write wins. */
  note(key, text) {
    this.extra.set(key, text);
  }

  /** { value, n } (median of samples), { na: reason }, or null when never attempted. */
  get(key) {
    const xs = this.samples.get(key);
    if (xs?.length) return { value: median(xs), n: xs.length, samples: xs };
    if (this.failures.has(key)) return { na: this.failures.get(key) };
    return null;
  }

  /**
   * Runs `fn`; when it throws, every key in `keys` gets the reason. Returns fn's value or null.
   * Scenario failures never abort the bench.
   */
  async attempt(keys, fn) {
    try {
      return await fn();
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      for (const k of [].concat(keys)) this.fail(k, reason);
      process.stderr.write(`  n/a: ${[].concat(keys)[0]}: ${reason}\n`);
      return null;
    }
  }

  toJSON() {
    return { samples: Object.fromEntries(this.samples), failures: Object.fromEntries(this.failures), notes: Object.fromEntries(this.extra) };
  }
}

