/**
 * `catalog serve --cors-origins`: PostgREST answers every origin (`Access-Control-Allow-Origin: *`);
 * a deployment that serves browsers from known sites names them, and any other origin's requests and
 * preflights get no CORS headers, so browsers keep their pages from reading or writing the catalog.
 */

/** The origins a list names, each as `scheme://host[:port]` without a trailing slash; `*` means any. */
export function parseCorsOrigins(list: string): string[] {
  const origins = list
    .split(',')
    .map((o) => o.trim())
    .filter((o) => o !== '');
  for (const o of origins) {
    if (o === '*') continue;
    let url: URL | null = null;
    try {
      url = new URL(o);
    } catch {
      url = null;
    }
    if (!url || !/^https?:$/.test(url.protocol) || url.origin !== o.replace(/\/$/, '')) {
      throw new Error(`--cors-origins takes origins such as https://app.example.com (scheme, host and port, nothing after), not ${JSON.stringify(o)}`);
    }
  }
  return origins.map((o) => o.replace(/\/$/, ''));
}

/** The CORS headers of a response (any casing), without the ones this origin may not have. */
export function restrictCors(headers: Record<string, string>, origin: string | null, allowed: readonly string[]): void {
  if (allowed.includes('*')) return;
  const keys = Object.keys(headers).filter((k) => k.toLowerCase().startsWith('access-control-'));
  if (keys.length === 0) return;
  if (origin !== null && allowed.includes(origin)) {
    for (const k of keys) if (k.toLowerCase() === 'access-control-allow-origin') headers[k] = origin;
  } else {
    for (const k of keys) delete headers[k];
  }
  // the answer now depends on the Origin a request carries: caches must not mix them up
  headers.vary = headers.vary ? `${headers.vary}, Origin` : 'Origin';
}

/** An app whose answers keep CORS headers only for the allowed origins. */
export function corsApp<A extends { reply(req: never): Promise<{ headers: Record<string, string> }> }>(app: A, allowed: readonly string[]): A {
  return {
    ...app,
    async reply(req: never) {
      const answer = await app.reply(req);
      const origin = (req as { header(name: string): string | null }).header('origin');
      restrictCors(answer.headers, origin, allowed);
      return answer;
    },
  };
}
