import type { Readable, Writable } from 'node:stream';

/** Asks yes/no questions; only ever used when stdin is a terminal. */
export interface Prompter {
  confirm(message: string, defaultValue?: boolean): Promise<boolean>;
}

/** The terminal prompter: @inquirer/prompts (loaded only when a question is asked), drawn on `output` (stderr) so stdout stays data. */
export function terminalPrompter(input: Readable, output: Writable): Prompter {
  return {
    async confirm(message, defaultValue = false) {
      const { confirm } = await import('@inquirer/prompts');
      return confirm({ message, default: defaultValue }, { input, output });
    },
  };
}
