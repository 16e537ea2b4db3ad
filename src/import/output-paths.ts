import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { ImportError } from './types.js';

/** An output file an import writes, named by its flag (`--rejects`). */
export interface OutputPath {
  flag: string;
  path: string | undefined;
}

/** The file a path names (device and inode: the same through a symlink, a hard link or another spelling), or null when there is none yet. */
async function identity(path: string): Promise<string | null> {
  const s = await stat(path).catch(() => null);
  return s ? `${s.dev}:${s.ino}` : null;
}

/**
 * Refuses (exit 2, before anything is opened, removed or written) an output that is the input
 * itself or another output: `import x.csv --rejects x.csv` used to remove the input as it cleared
 * an old rejects file. Files are compared by device and inode, so a symlink, a hard link or a
 * relative spelling of the input is caught too; outputs not yet existing are compared by path.
 * @example await refuseOutputsOverInput('x.csv', [{ flag: '--rejects', path: './x.csv' }]) // throws
 */
export async function refuseOutputsOverInput(input: string, outputs: OutputPath[]): Promise<void> {
  const inputId = input === '-' ? null : await identity(input);
  const seen = new Map<string, string>();
  for (const { flag, path } of outputs) {
    if (!path) continue;
    const id = await identity(path);
    if (id !== null && id === inputId) {
      throw new ImportError(`${flag} ${path} is the input file ${input}: writing it would destroy the input; name another file`, 'usage');
    }
    const key = id ?? `path:${resolve(path)}`;
    const other = seen.get(key);
    if (other) throw new ImportError(`${flag} ${path} is the same file as ${other}: give each output its own file`, 'usage');
    seen.set(key, `${flag} ${path}`);
  }
}
