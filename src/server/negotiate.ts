import type { MediaType } from '../grammar/types.js';
import { ApiError } from './errors.js';
import { COPY_CSV } from '../grammar/media.js';

/** The shape of a response body the SQL builds: JSON array or object (stripped of nulls or not), CSV, or none. */
export type BodyFormat = 'json' | 'json-stripped' | 'object' | 'object-stripped' | 'csv' | 'none';

/** The representation chosen for a table response. */
export interface Representation {
  format: Exclude<BodyFormat, 'none'>;
  /** Content-Type header value. */
  contentType: string;
  singular: boolean;
  /** Our COPY media type: the read streams `COPY … TO` output (see copy-out.ts); `format` is unused. */
  copy?: true;
}

const JSON_CT = 'application/json; charset=utf-8';

function stripped(m: MediaType): boolean {
  return (m.params.nulls ?? '').toLowerCase() === 'stripped';
}

/** The representation one media range offers on a table, or null (reference §8). */
function offer(m: MediaType): Representation | null {
  switch (m.type) {
    case '*/*':
    case 'application/json':
      return { format: 'json', contentType: JSON_CT, singular: false };
    case 'application/vnd.pgrst.array+json':
    case 'application/vnd.pgrst.array':
      return stripped(m)
        ? { format: 'json-stripped', contentType: 'application/vnd.pgrst.array+json;nulls=stripped; charset=utf-8', singular: false }
        : { format: 'json', contentType: JSON_CT, singular: false };
    case 'application/vnd.pgrst.object+json':
    case 'application/vnd.pgrst.object':
      return stripped(m)
        ? { format: 'object-stripped', contentType: 'application/vnd.pgrst.object+json;nulls=stripped; charset=utf-8', singular: true }
        : { format: 'object', contentType: 'application/vnd.pgrst.object+json; charset=utf-8', singular: true };
    case 'text/csv':
      return { format: 'csv', contentType: 'text/csv; charset=utf-8', singular: false };
    case COPY_CSV:
      return { format: 'csv', contentType: `${COPY_CSV}; charset=utf-8`, singular: false, copy: true };
    default:
      return null;
  }
}

/**
 * Picks the first acceptable representation in the client's order of preference (the Accept list
 * comes sorted by q); no Accept means JSON. Nothing acceptable → 406 PGRST107.
 */
export function chooseRepresentation(accepted: MediaType[]): Representation {
  if (accepted.length === 0) return { format: 'json', contentType: JSON_CT, singular: false };
  for (const m of accepted) {
    if (m.q <= 0) continue;
    const r = offer(m);
    if (r) return r;
  }
  throw new ApiError(406, 'PGRST107', `None of these media types are available: ${accepted.map(render).join(', ')}`);
}

function render(m: MediaType): string {
  const params = Object.entries(m.params)
    .filter(([k]) => k !== 'q')
    .map(([k, v]) => `;${k}=${v}`)
    .join('');
  return `${m.type}${params}`;
}
