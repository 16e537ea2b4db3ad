/**
 * A name as a PostgreSQL identifier: double-quoted, its double quotes doubled. The one quoting of
 * names in SQL the code writes (the service's statements, the store's, the side table's name).
 * @example quoteIdent('my "odd" schema') // '"my ""odd"" schema"'
 */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
