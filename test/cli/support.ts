import { Readable } from 'node:stream';
import { Context, type ServerControl } from '../../src/cli/context.js';
import type { Transport } from '../../src/client/transport.js';
import { run } from '../../src/cli/main.js';
import type { Prompter } from '../../src/io/prompt.js';
import { bufferOutput, type BufferOutput } from '../../src/io/streams.js';
import { tempDir } from '../support/stores.js';

export interface TestContextOptions {
  env?: Record<string, string | undefined>;
  stdin?: string;
  stdinTTY?: boolean;
  stdoutTTY?: boolean;
  stderrTTY?: boolean;
  columns?: number;
  prompter?: Prompter;
  server?: ServerControl;
  now?: number;
  /** The service in process (`appTransport(createApp({ store }))`): commands then run without a socket. */
  transport?: Transport;
}

export interface TestContext {
  ctx: Context;
  stdout: BufferOutput;
  stderr: BufferOutput;
}

/** A context over in-memory streams with its own XDG directories (no globals touched). */
export function testContext(o: TestContextOptions = {}): TestContext {
  const home = tempDir('home-');
  const stdout = bufferOutput({ isTTY: o.stdoutTTY, columns: o.columns });
  const stderr = bufferOutput({ isTTY: o.stderrTTY });
  const ctx = new Context({
    io: { stdin: { isTTY: Boolean(o.stdinTTY), stream: Readable.from([o.stdin ?? '']) }, stdout, stderr },
    env: { XDG_CONFIG_HOME: `${home}/config`, XDG_CACHE_HOME: `${home}/cache`, XDG_DATA_HOME: `${home}/data`, ...o.env },
    home,
    clock: { now: () => o.now ?? Date.parse('2025-01-25T12:00:00Z') },
    prompter: o.prompter,
    server: o.server,
    transport: o.transport,
    version: '0.0.0-test',
  });
  return { ctx, stdout, stderr };
}

/** Runs the command line in a test context; returns the exit code and both streams' text. */
export async function runCli(args: string[], o: TestContextOptions = {}): Promise<{ code: number; out: string; err: string; ctx: Context }> {
  const t = testContext(o);
  const code = await run(['node', 'catalog', ...args], t.ctx);
  return { code, out: t.stdout.text(), err: t.stderr.text(), ctx: t.ctx };
}

export { type TestService, useTestService } from '../support/service.js';
