/** ANSI styling that is a no-op when colour is off. */
export interface Style {
  bold(s: string): string;
  dim(s: string): string;
  red(s: string): string;
  yellow(s: string): string;
  green(s: string): string;
  cyan(s: string): string;
}

const wrap = (open: number, close: number) => (s: string) => `\x1b[${open}m${s}\x1b[${close}m`;

const ON: Style = { bold: wrap(1, 22), dim: wrap(2, 22), red: wrap(31, 39), yellow: wrap(33, 39), green: wrap(32, 39), cyan: wrap(36, 39) };
const id = (s: string) => s;
const OFF: Style = { bold: id, dim: id, red: id, yellow: id, green: id, cyan: id };

/** The styler for a stream whose colour flag is `enabled`. */
export function style(enabled: boolean): Style {
  return enabled ? ON : OFF;
}
