import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { builtinSchema, schemaFromOpenApi, type SchemaModel } from './model.js';

/** The cache file for one service URL's root description. */
export function schemaCacheFile(cacheDir: string, url: string): string {
  const key = createHash('sha256').update(url.replace(/\/+$/, '')).digest('hex').slice(0, 16);
  return join(cacheDir, 'schema', `${key}.json`);
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
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(doc));
    renameSync(tmp, file);
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
