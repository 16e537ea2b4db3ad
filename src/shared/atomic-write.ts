import { closeSync, constants, fchmodSync, openSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';

/**
 * Writing a file whole or not at all: the content goes to a temporary file beside it (same
 * directory, so the rename never crosses file systems) which is then renamed over it, so a reader
 * sees the old content or the new, never half, and a kill mid-write leaves the old file. The
 * temporary file is removed when anything fails.
 */

/** What a file is written from: text (UTF-8), bytes, or pieces of bytes in order. */
export type FileContent = string | Uint8Array | readonly Uint8Array[];

export interface AtomicWriteOptions {
  /** The new file's mode, exactly (the umask does not narrow it); default: the replaced file's mode, else 0666 less the umask. */
  mode?: number;
}

let written = 0;

/**
 * A temporary name beside `path`, unique among this process's calls and the processes running:
 * the pid (eight hex digits) and a counter, all hex, so `*.<hex>.tmp` patterns know it.
 * @example tempPathFor('/d/lock.json') // '/d/lock.json.000004d21.tmp' (pid 1234, first call)
 */
export function tempPathFor(path: string, suffix = 'tmp'): string {
  return `${path}.${process.pid.toString(16).padStart(8, '0')}${(++written).toString(16)}.${suffix}`;
}

/** Replaces `path` with `content` whole (see above); the synchronous form. */
export function writeFileAtomicSync(path: string, content: FileContent, opts: AtomicWriteOptions = {}): void {
  const mode = opts.mode ?? existingMode(path);
  const tmp = tempPathFor(path);
  let fd = -1;
  try {
    fd = freshFile(tmp, mode);
    if (mode !== undefined) fchmodSync(fd, mode);
    for (const piece of pieces(content)) {
      for (let done = 0; done < piece.length; ) done += writeSync(fd, piece, done, piece.length - done);
    }
    closeSync(fd);
    fd = -1;
    renameSync(tmp, path);
  } catch (err) {
    if (fd >= 0) closeQuietly(fd);
    rmSync(tmp, { force: true });
    throw err;
  }
}

/**
 * Replaces `path` with `content` whole (see above), for a caller that awaits: the same write as
 * writeFileAtomicSync, one implementation. Its callers write small files (an import's checkpoint,
 * a few hundred bytes after each batch), where the synchronous calls take well under a millisecond.
 */
export async function writeFileAtomic(path: string, content: FileContent, opts: AtomicWriteOptions = {}): Promise<void> {
  writeFileAtomicSync(path, content, opts);
}

/**
 * Creates `tmp` (O_EXCL: never a file or link someone else made). One of this name can only be
 * left over from a process of this pid that died: it is removed and made again.
 */
function freshFile(tmp: string, mode: number | undefined): number {
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL;
  try {
    return openSync(tmp, flags, mode ?? 0o666);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    rmSync(tmp, { force: true });
    return openSync(tmp, flags, mode ?? 0o666);
  }
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // the write's own error is the one to report
  }
}

/** The permission bits of the file a write replaces, or undefined when there is none. */
function existingMode(path: string): number | undefined {
  try {
    return statSync(path).mode & 0o777;
  } catch {
    return undefined;
  }
}

function pieces(content: FileContent): readonly Uint8Array[] {
  if (typeof content === 'string') return [Buffer.from(content)];
  return content instanceof Uint8Array ? [content] : content;
}
