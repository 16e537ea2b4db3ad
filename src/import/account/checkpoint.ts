import { createHash } from 'node:crypto';
import { open, readFile, rm, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { writeFileAtomic } from '../../shared/atomic-write.js';

/** Identifies an input file well enough to refuse resuming against a different one. */
export interface Fingerprint {
  path: string;
  size: number;
  mtimeMs: number;
  /** sha256 of the first 64 KB. */
  head: string;
}

/** Counts carried across a resumed import. */
export interface CarriedCounts {
  inserted: number;
  updated: number;
  unchanged: number;
  rejected: number;
  deduped: number;
}

/** What `--resume` needs: where it stopped and what it had done. */
export interface Checkpoint {
  version: 1;
  table: string;
  fingerprint: Fingerprint;
  /** Every record with an index below this is committed (or rejected and written out). */
  committed: number;
  /** Line of the first record not yet committed (for messages). */
  line: number;
  counts: CarriedCounts;
  savedAt: string;
}

/** Fingerprints a file: path, size, mtime and a hash of its first 64 KB. */
export async function fingerprint(path: string): Promise<Fingerprint> {
  const s = await stat(path);
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.alloc(Math.min(65536, s.size));
    await fh.read(buf, 0, buf.length, 0);
    return { path: resolve(path), size: s.size, mtimeMs: Math.trunc(s.mtimeMs), head: createHash('sha256').update(buf).digest('hex') };
  } finally {
    await fh.close();
  }
}

/** Why a fingerprint does not match, or null when it does. */
export function fingerprintMismatch(saved: Fingerprint, now: Fingerprint): string | null {
  if (saved.size !== now.size) return `its size changed (${saved.size} → ${now.size} bytes)`;
  if (saved.head !== now.head) return 'its first 64 KB changed';
  if (saved.mtimeMs !== now.mtimeMs) return 'it was modified since the checkpoint';
  return null;
}

/** Reads a checkpoint file; null when there is none. */
export async function readCheckpoint(path: string): Promise<Checkpoint | null> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return null;
  }
  const cp = JSON.parse(text) as Checkpoint;
  return cp && cp.version === 1 ? cp : null;
}

/** Writes a checkpoint atomically (temp file + rename), so a kill mid-write leaves the old one. */
export async function writeCheckpoint(path: string, cp: Checkpoint): Promise<void> {
  await writeFileAtomic(path, `${JSON.stringify(cp, null, 2)}\n`);
}

/** Deletes a checkpoint (the import finished). */
export async function removeCheckpoint(path: string): Promise<void> {
  await rm(path, { force: true });
}
