import type { Store } from '../store/store.js';
import { asRefusal, AuthError, type AuthSettings } from './auth.js';
import { refuseCopyAsRole } from './db-role.js';
import { copyOutReply } from './copy-out.js';
import { ApiError, defaultMaxBody, errorReply } from './errors.js';
import { fromRequest, type Incoming, type Reply, toResponse } from './exchange.js';
import { execute } from './execute.js';
import { planRequest, type Planned } from './plan.js';
import { parseRequest } from './request.js';
import { runReply } from './runs.js';
import { decorate, shapeResponse, specialResponse } from './response.js';
import { buildPlannedCount, buildRead, buildWrite, type Statement } from './sql.js';

export interface AppOptions {
  store: Store;
  /** A passphrase, or the settings `buildAuth` made (JWK/JWKS, aud, role claim, --db-roles). */
  jwtSecret?: string | AuthSettings;
  /** Largest accepted request body (default 64 MiB); larger bodies get 413. */
  maxBodyBytes?: number;
  /** PostgREST's db-max-rows: caps every read, at every embed level. */
  maxRows?: number;
  /** When set, responses carry `Server: postgrest/<version>`. */
  serverVersion?: string;
  /**
   * PostgREST's db-aggregates-enabled (default off, as in PostgREST): `select=genre,count()` groups
   * by the other selected fields. `catalog serve` and the embedded catalog turn it on.
   */
  aggregates?: boolean;
  /** Where unexpected errors are logged (default: console.error). */
  log?: (line: string) => void;
}

export interface App {
  /** The service as fetch sees it (tests, the in-process transport). */
  handle(req: Request): Promise<Response>;
  /** The same answer for an adapter that builds no Request/Response (listen.ts). */
  reply(req: Incoming): Promise<Reply>;
}

/** The query building stage: the request's one statement (and the EXPLAIN for planned counts). */
function buildStatement(planned: Planned, schema: string): { main: Statement; extra: Statement | null } {
  const { plan, representation } = planned;
  if (plan.kind === 'read') {
    const extra = plan.count === 'planned' || plan.count === 'estimated' ? buildPlannedCount(plan, schema) : null;
    return { main: buildRead(plan, schema, representation.format), extra };
  }
  return { main: buildWrite(plan, schema, planned.returnMode === 'representation' ? representation.format : 'none'), extra: null };
}

/** The service as a function from request to answer: parse, plan, build, run, respond. */
export function createApp(opts: AppOptions): App {
  const { store } = opts;
  const schema = store.schema;
  const log = opts.log ?? ((line: string) => console.error(line));
  const requestOptions = { schema, maxBodyBytes: opts.maxBodyBytes ?? defaultMaxBody(store.kind), jwtSecret: opts.jwtSecret, aggregates: opts.aggregates };

  async function answer(req: Incoming): Promise<Reply> {
    const request = await parseRequest(req, requestOptions);
    if (request.kind === 'run') return runReply(store, request);
    if (request.kind !== 'table') return specialResponse(request);
    const planned = planRequest(request, { schema, maxRows: opts.maxRows });
    if (planned.representation.copy) {
      refuseCopyAsRole(request.principal);
      return copyOutReply(store, planned, opts.maxRows);
    }
    const statement = buildStatement(planned, schema);
    const result = await execute(store, planned, statement.main, statement.extra, req.signal);
    return shapeResponse(planned, result);
  }

  async function reply(req: Incoming): Promise<Reply> {
    let res: Reply;
    try {
      res = await answer(req);
    } catch (caught) {
      const err = asRefusal(caught, req.principal);
      // nobody waits for the answer of a request its client left (its statement was cancelled): nothing to log
      if (req.signal?.aborted) return { status: 499, headers: {}, body: null };
      res = errorReply(err instanceof AuthError ? new ApiError(err.status, err.code, err.message, { headers: err.headers }) : err, log);
    }
    return decorate(req, res, opts.serverVersion);
  }

  return {
    reply,
    async handle(req: Request): Promise<Response> {
      return toResponse(await reply(fromRequest(req)));
    },
  };
}
