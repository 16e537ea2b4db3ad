import { COLLECTIONS } from '../schema/catalog.js';
import type { Style } from '../io/style.js';

/** What `catalog` alone prints: the collections, the commands people use most, and where the data is. */
export function guide(s: Style, dataDir: string, url: string | undefined): string {
  const rows: Array<[string, string]> = [
    ["catalog artists list --where 'stage_name~*dj*'", 'find artists (table on a terminal, JSON when piped)'],
    ['catalog releases get <id>', 'one release'],
    ["catalog labels add name='Blue Note'", 'add a label'],
    ["catalog releases update <id> release_date=2024-05-17", 'change a field'],
    ['catalog tracks import tracks.csv', 'bulk import (CSV, JSON, NDJSON, YAML)'],
    ['catalog artists describe', 'the fields of a collection'],
    ['catalog serve', 'run the service for other tools'],
  ];
  const width = Math.max(...rows.map(([c]) => c.length));
  return [
    `${s.bold('catalog')} — administer the music catalog`,
    '',
    `${s.bold('Collections:')} ${COLLECTIONS.join(', ')}`,
    '',
    s.bold('Common commands:'),
    ...rows.map(([c, d]) => `  ${c.padEnd(width)}  ${s.dim(d)}`),
    '',
    `${s.bold('Data:')} ${url ? `the service at ${url}` : `the embedded catalog in ${dataDir} (CATALOG_DATA); --url or CATALOG_URL for a service`}`,
    `More: catalog --help, catalog <collection> --help, catalog <collection> <command> --help`,
    '',
  ].join('\n');
}
