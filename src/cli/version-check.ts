import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { INTERFACE_VERSION, REMOVED_FIELDS } from '../schema/catalog.js';
import { CHANGELOG } from '../schema/changelog.js';
import { writeFileAtomicSync } from '../shared/atomic-write.js';

/** The file that remembers which service URLs were already warned about, and for which version. */
export function versionWarningsFile(cacheDir: string): string {
  return join(cacheDir, 'version-warnings.json');
}

function readWarned(file: string): Record<string, string> {
  try {
    const v = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, string>) : {};
  } catch {
    return {};
  }
}

/**
 * The warning to print when a service reports an interface version other than the one this tool
 * was built for, or null. It is given once per URL and version: the fact is kept in the cache
 * directory, so the next commands against the same service stay quiet (a read-only cache only
 * means the warning repeats).
 * @example versionWarning({ url: 'https://c.example', version: '12.3.0', cacheDir }) // 'the service at https://c.example reports …'
 */
export function versionWarning(opts: { url: string; version: string | null; cacheDir: string; expected?: string }): string | null {
  const expected = opts.expected ?? INTERFACE_VERSION;
  if (!opts.version || opts.version === expected) return null;
  const url = opts.url.replace(/\/+$/, '');
  const file = versionWarningsFile(opts.cacheDir);
  const warned = readWarned(file);
  if (warned[url] === opts.version) return null;
  try {
    mkdirSync(opts.cacheDir, { recursive: true });
    writeFileAtomicSync(file, JSON.stringify({ ...warned, [url]: opts.version }));
  } catch {
    // ignore: the warning will simply show again next time
  }
  return `the service at ${url} reports interface version ${opts.version}; this tool was built for ${expected}, so fields may differ. See what changed: catalog changelog`;
}

/**
 * When `field` is one the interface removed from `collection`, a message saying so and in which
 * version (from the changelog); null for any other field. For the flag validation's unknown-field error.
 * @example removedFieldMessage('artists', 'slug') // "the field 'slug' was removed from artists in interface 12.2.3 (see: catalog changelog)"
 */
export function removedFieldMessage(collection: string, field: string): string | null {
  if (!(REMOVED_FIELDS[collection] ?? []).includes(field)) return null;
  const mentions = (text: string) => new RegExp(`\\b${field}\\b.*\\bremoved\\b`).test(text);
  const version = CHANGELOG.find((v) => v.changes.some((c) => mentions(c.change) && c.appliesTo.includes(`/${collection}`)))?.version ?? INTERFACE_VERSION;
  return `the field '${field}' was removed from ${collection} in interface ${version} (see: catalog changelog)`;
}
