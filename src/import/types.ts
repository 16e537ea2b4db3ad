// the file formats import reads and export writes live below both (src/format/types.ts)
import type { InputFormat } from '../format/types.js';
export { INPUT_FORMATS, type InputFormat } from '../format/types.js';

/** One record read from an input, before mapping to fields. */
export interface SourceRecord {
  /** 0-based position among the input's records (the checkpoint counts these). */
  index: number;
  /** 1-based line of the input where the record starts. */
  line: number;
  /** Source key → value: raw cell text for CSV, parsed values for JSON/NDJSON/YAML. */
  values: Record<string, unknown>;
  /**
   * CSV only: the cells in header order (`values` is built from them on demand, so the import's
   * hot path reads cells by position and no per-row object is made).
   */
  cells?: string[];
  /** CSV only: the header row `cells` line up with. */
  headers?: string[];
  /** Set when the record itself could not be read (malformed JSON element, not an object). */
  error?: string;
  /**
   * xlsx only: what a date column makes of a cell: the ISO date a plain number (no date format)
   * stands for as an Excel serial date, in the workbook's date system; a fault for a date cell
   * with a time of day (naming the cell and the time); undefined for any other cell. Date columns read it.
   */
  dateOf?(cell: number): string | { error: string } | undefined;
  /** xlsx only: said when the header is refused (a title row above it, the workbook's other sheets). */
  advice?: string;
}

/**
 * A record read as cells under a header row (CSV, an xlsx sheet): each reader's record says how
 * its `values` are built from the cells (only when something asks).
 */
export abstract class CellRecord implements SourceRecord {
  error?: string;
  constructor(
    readonly index: number,
    readonly line: number,
    readonly cells: string[],
    readonly headers: string[],
  ) {}

  abstract get values(): Record<string, unknown>;
}

/** A streaming reader over one input. */
export interface RecordReader {
  /** CSV's header row once the first record has been read; null for self-describing formats. */
  readonly headers: string[] | null;
  records(): AsyncIterable<SourceRecord>;
  /** Bytes consumed from the input so far (progress, ETA). */
  bytesRead(): number;
}

/** An error as it was (its exit code unchanged) with what to do next, which the CLI shows as a hint under it. */
export function withHint(err: unknown, hint: string | null): unknown {
  if (hint && err instanceof Error) Object.assign(err, { nextStep: hint });
  return err;
}

/** The hint withHint left on an error, if any. */
export function nextStepOf(err: unknown): string | null {
  const next = err instanceof Error ? (err as Error & { nextStep?: unknown }).nextStep : undefined;
  return typeof next === 'string' ? next : null;
}

/**
 * An import or export failure that is the user's to fix. `kind` says whose: `usage` (a flag, a
 * header, the wrong file: the command line must change) or `input` (the data or the service
 * refused it). The CLI decides the exit code from it (src/cli/errors.ts); the engine never does.
 */
export class ImportError extends Error {
  override readonly name = 'ImportError';
  constructor(
    message: string,
    readonly kind: 'usage' | 'input' = 'input',
  ) {
    super(message);
  }
}
