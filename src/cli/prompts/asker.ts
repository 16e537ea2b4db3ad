import { emitKeypressEvents } from 'node:readline';
import type { Readable } from 'node:stream';
import { Writable } from 'node:stream';
import type { Output } from '../../io/streams.js';
import { style as makeStyle } from '../../io/style.js';

/** One entry of a list to choose from. */
export interface Choice<V> {
  value: V;
  name: string;
  description?: string;
  checked?: boolean;
}

/** A validator: true when the answer is acceptable, otherwise the message to show under the prompt. */
export type Validate = (value: string) => true | string;

/**
 * The questions interactive entry asks. The terminal implementation is @inquirer/prompts; the
 * seam exists so the flow can be driven from tests through real prompts on in-memory streams.
 */
export interface Asker {
  input(o: { message: string; default?: string; validate?: Validate; transformer?: (value: string, final: boolean) => string }): Promise<string>;
  confirm(o: { message: string; default?: boolean }): Promise<boolean>;
  search<V>(o: { message: string; source: (term: string | undefined, signal: AbortSignal) => Promise<Choice<V>[]>; pageSize?: number }): Promise<V>;
  editor(o: { message: string; default?: string; validate?: Validate; postfix?: string }): Promise<string>;
  checkbox<V>(o: { message: string; choices: Choice<V>[]; pageSize?: number }): Promise<V[]>;
}

/**
 * A fresh Writable over an Output for one prompt: inquirer ends its output stream when a prompt
 * is done, so each prompt gets its own adapter and the real stream stays open. Each chunk is
 * handed on at once (not after the previous write settles) so that the prompt's last frame is
 * out before whatever the command writes next.
 */
function promptOutput(out: Output): Writable & { columns: number; rows: number; isTTY: boolean } {
  const w = new Writable({
    write(chunk: Buffer | string, _enc, cb) {
      void out.write(typeof chunk === 'string' ? chunk : chunk.toString('utf8'));
      cb();
    },
  });
  return Object.assign(w, { columns: out.columns || 80, rows: 24, isTTY: true });
}

/** The theme: our colours (NO_COLOR/FORCE_COLOR/--no-color as decided for stderr) instead of inquirer's stdout-based ones. */
function themeFor(out: Output) {
  const s = makeStyle(out.color);
  return {
    prefix: { idle: s.cyan('?'), done: s.green('✔') },
    style: {
      answer: s.cyan,
      message: s.bold,
      error: (t: string) => s.red(`> ${t}`),
      defaultAnswer: (t: string) => s.dim(`(${t})`),
      help: s.dim,
      highlight: s.cyan,
      key: (t: string) => s.cyan(`<${t}>`),
    },
  };
}

/**
 * An AbortSignal that Esc fires while one prompt is up: Esc cancels that question (the flow then
 * skips the field), where Ctrl-C ends the whole command.
 */
function escapeSignal(input: Readable): { signal: AbortSignal; done: () => void } {
  const ac = new AbortController();
  emitKeypressEvents(input);
  const onKey = (_s: string, key: { name?: string } | undefined) => {
    if (key?.name === 'escape') ac.abort();
  };
  input.on('keypress', onKey);
  return { signal: ac.signal, done: () => void input.off('keypress', onKey) };
}

/** The terminal asker: @inquirer/prompts, imported on the first question, drawn on `out` (stderr) so stdout stays data. */
export function inquirerAsker(input: Readable, out: Output): Asker {
  const load = async () => {
    const prompts = await import('@inquirer/prompts');
    // Every prompt runs with an Esc signal, released when it settles.
    const wrap = <A extends unknown[], R>(fn: (...a: A) => Promise<R>) => (...args: A): Promise<R> => {
      const esc = escapeSignal(input);
      const ctxArg = args[1] as Record<string, unknown>;
      args[1] = { ...ctxArg, signal: esc.signal } as A[1];
      return fn(...args).finally(esc.done);
    };
    return {
      input: wrap(prompts.input),
      confirm: wrap(prompts.confirm),
      search: wrap(prompts.search),
      editor: wrap(prompts.editor),
      checkbox: wrap(prompts.checkbox),
    };
  };
  const context = () => ({ input, output: promptOutput(out) });
  const theme = themeFor(out);
  return {
    async input(o) {
      const { input: ask } = await load();
      const transformer = o.transformer;
      return ask({ message: o.message, default: o.default, validate: o.validate, theme, transformer: transformer ? (v, { isFinal }) => transformer(v, isFinal) : undefined }, context());
    },
    async confirm(o) {
      const { confirm } = await load();
      return confirm({ message: o.message, default: o.default, theme }, context());
    },
    async search<V>(o: { message: string; source: (term: string | undefined, signal: AbortSignal) => Promise<Choice<V>[]>; pageSize?: number }) {
      const { search } = await load();
      return search<V>({ message: o.message, pageSize: o.pageSize, theme, source: (term, { signal }) => o.source(term, signal) }, context()) as Promise<V>;
    },
    async editor(o) {
      const { editor } = await load();
      return editor({ message: o.message, default: o.default, validate: o.validate, postfix: o.postfix, theme }, context());
    },
    async checkbox<V>(o: { message: string; choices: Choice<V>[]; pageSize?: number }) {
      const { checkbox } = await load();
      return checkbox<V>({ message: o.message, choices: o.choices, pageSize: o.pageSize, theme }, context()) as Promise<V[]>;
    },
  };
}

/** True when Esc cancelled the question (inquirer's AbortPromptError from our Esc signal). */
export function isPromptAbort(err: unknown): boolean {
  return err instanceof Error && err.name === 'AbortPromptError';
}

/** True for inquirer's "the user pressed Ctrl-C / closed the prompt" error. */
export function isPromptCancel(err: unknown): boolean {
  return err instanceof Error && (err.name === 'ExitPromptError' || err.name === 'AbortPromptError' || err.name === 'CancelPromptError');
}
