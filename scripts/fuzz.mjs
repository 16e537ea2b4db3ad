#!/usr/bin/env node
// The long fuzzing run, outside `npm test`:
//   npx tsc -p . && node scripts/fuzz.mjs --cases 100000 [--seed N] [--database-url URL]
// Runs the same generators as test/security/fuzz.test.ts against the compiled app (dist/) over an
// in-memory PGlite catalog (or a fresh schema in PostgreSQL with --database-url): the parser on random
// query strings, then the whole app on random requests. Fails (exit 1) on any 5xx, any error body
// outside PostgREST's shape, any unexpected internal error, any non-GrammarError from the parser, or
// any change to the canary table or the table list. Prints progress on stderr and one JSON summary
// line on stdout.
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import fc from 'fast-check';
import { checkOne, hostileCorpus, invariants, queryStringArbitrary, requestArbitrary, seedSmall } from '../test/security/cases.mjs';

const { values } = parseArgs({
  options: {
    cases: { type: 'string', default: '100000' },
    seed: { type: 'string' },
    'database-url': { type: 'string' },
    'reseed-every': { type: 'string', default: '2000' },
  },
});
const cases = Number(values.cases);
const seed = values.seed === undefined ? Date.now() % 2 ** 31 : Number(values.seed);
const reseedEvery = Number(values['reseed-every']);
const dist = new URL('../dist/', import.meta.url);
const load = (p) => import(new URL(p, dist).href);

const { createApp } = await load('server/app.js');
const { parseQuery } = await load('grammar/parse.js');
const { GrammarError } = await load('grammar/errors.js');

let store;
let drop = async () => {};
if (values['database-url']) {
  const { openPostgres } = await load('store/postgres.js');
  const schema = `catalog_fuzz_${process.pid}`;
  store = await openPostgres({ url: values['database-url'], schema, max: 4 });
  drop = async () => store.query(`drop schema if exists ${schema} cascade`);
} else {
  const { openPGlite, migratedTemplate } = await load('store/pglite.js');
  store = await openPGlite({ template: await migratedTemplate() });
}

const corpus = hostileCorpus(`/tmp/catalog-fuzz-pwned-${process.pid}`);
const started = performance.now();
const summary = { cases, seed, store: store.kind, parserCases: 0, serverCases: 0, statuses: {}, notSendable: 0, problems: [], internalErrors: [], invariantsHeld: false };

// ---- the parser alone
const stringsArb = fc.oneof(queryStringArbitrary(corpus), fc.string({ unit: 'binary', maxLength: 60 }));
for (const s of fc.sample(stringsArb, { numRuns: cases, seed })) {
  summary.parserCases++;
  try {
    parseQuery(s);
  } catch (err) {
    if (!(err instanceof GrammarError)) summary.problems.push(`parseQuery(${JSON.stringify(s)}) threw ${err?.stack ?? err}`);
  }
}
process.stderr.write(`parser: ${summary.parserCases} query strings, ${summary.problems.length} problems (${Math.round(performance.now() - started)} ms)\n`);

// ---- the whole app
await seedSmall(store);
const before = await invariants(store);
const app = createApp({ store, log: (line) => summary.internalErrors.push(line) });
const requests = fc.sample(requestArbitrary(corpus), { numRuns: cases, seed: seed + 1 });
for (let i = 0; i < requests.length; i++) {
  if (i > 0 && i % reseedEvery === 0) {
    if ((await invariants(store)) !== before) break;
    await seedSmall(store); // random DELETEs empty the tables; put rows back so reads keep reaching data
  }
  const { status, problem } = await checkOne(app.handle, requests[i]);
  summary.serverCases++;
  if (status === 0) summary.notSendable++;
  else summary.statuses[status] = (summary.statuses[status] ?? 0) + 1;
  if (problem) summary.problems.push(problem);
  if (summary.problems.length >= 20) break;
  if ((i + 1) % 10_000 === 0) process.stderr.write(`server: ${i + 1} requests, ${summary.problems.length} problems (${Math.round(performance.now() - started)} ms)\n`);
}
summary.invariantsHeld = (await invariants(store)) === before;
const alive = await app.handle(new Request('http://localhost/labels?select=id&limit=1'));
summary.aliveAfterwards = alive.status === 200;
summary.seconds = Math.round((performance.now() - started) / 100) / 10;
await drop();
await store.close();

const ok = summary.problems.length === 0 && summary.internalErrors.length === 0 && summary.invariantsHeld && summary.aliveAfterwards && summary.serverCases === cases;
process.stdout.write(`${JSON.stringify(summary)}\n`);
process.stderr.write(ok ? `fuzz: ${cases} parser cases and ${cases} requests, no 5xx, invariants held (seed ${seed})\n` : `fuzz: FAILED (seed ${seed})\n`);
process.exitCode = ok ? 0 : 1;
