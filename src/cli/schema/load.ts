import { mkdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { builtinSchema } from '../../schema/catalog.js';
import { schemaFromOpenApi, type SchemaModel } from '../../schema/model.js';
import { writeFileAtomicSync } from '../../shared/atomic-write.js';

/**
 * A file-name-safe key for a URL: 64 bits of FNV-1a (two 32-bit lanes). Not a digest against
 * tampering, just a name; node:crypto would add ~3 ms to every command's start.
 * @example urlKey('http://127.0.0.1:3000') // 16 hex digits
 */
export function urlKey(url: string): string {
  let a = 0x811c9dc5;
  let b = 0xcbf29ce4;
  for (const byte of Buffer.from(url, 'utf8')) {
    a = Math.imul(a ^ byte, 0x01000193);
    b = Math.imul(b ^ byte, 0x01000193) ^ (a >>> 7);
  }
  return (a >>> 0).toString(16).padStart(8, '0') + (b >>> 0).toString(16).padStart(8, '0');
}

/** The cache file for one service URL's root description. */
export function schemaCacheFile(cacheDir: string, url: string): string {
  return join(cacheDir, 'schema', `${urlKey(url.replace(/\/+$/, ''))}.json`);
}

/** Reads a cached root description; null when absent or unreadable. */
export function readCachedDocument(file: string): Record<string, unknown> | null {
  if (!existsSync(file)) return null;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch {
    return null;
  }
}

/** Stores a root description in the cache (atomically; a read-only cache only costs a fetch next time). */
export function writeCachedDocument(file: string, doc: Record<string, unknown>): void {
  try {
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileAtomicSync(file, JSON.stringify(doc));
  } catch {
    // ignore
  }
}

export interface SchemaSource {
  /** The service's URL; null for the embedded catalog (the built-in schema). */
  url: string | null;
  cacheDir: string;
  refresh: boolean;
  /** Nothing may be sent (dry run): use the cache or the built-in schema. */
  offline: boolean;
  /** Fetches the root description (GET /). */
  fetch(): Promise<Record<string, unknown>>;
}

/** The schema for a command: built in, cached per URL, or fetched once from the service's root. */
export async function loadSchema(src: SchemaSource): Promise<SchemaModel> {
  if (!src.url) return builtinSchema();
  const file = schemaCacheFile(src.cacheDir, src.url);
  if (!src.refresh || src.offline) {
    const cached = readCachedDocument(file);
    if (cached) return schemaFromOpenApi(cached, 'cache');
    if (src.offline) return builtinSchema();
  }
  const doc = await src.fetch();
  writeCachedDocument(file, doc);
  return schemaFromOpenApi(doc, 'service');
}
