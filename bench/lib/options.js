/** Command-line options of `npm run bench` (pure parsing, so the smoke test can call it). */

export const USAGE = `usage: npm run bench -- [options]
  --rows N[,N...]   track counts to run (default 100000,1000000)
  --runs N          runs per scenario; the table shows medians (default 3)
  --big-runs N      runs of import/export at 1M rows and more (default: --runs)
  --quick           fast smoke run: 10k rows, 1 run, short load tests
  --only NAME[,..]  scenarios: import, export, list, load, workers, coldstart, startup, xlsx, check, hostile, keyed, orphans, links (default all)
  --stores S[,..]   postgres, pglite (default both)
  --pg-url URL      admin connection (default postgres://postgres@127.0.0.1:5432/postgres)
  --out FILE        markdown table (default BENCHMARKS.md; --quick writes bench/out/quick.md)
  --keep            keep the scratch database and directories (for profiling)`;

export const SCENARIOS = ['import', 'export', 'list', 'load', 'workers', 'coldstart', 'startup', 'xlsx', 'check', 'hostile', 'keyed', 'orphans', 'links'];

/** Scenarios that need neither the generated tracks files nor the scratch stores. */
export const STANDALONE = ['startup'];

/** Parses argv (without node and script) into options; throws on unknown flags. */
export function parseOptions(argv) {
  const o = {
    rows: [100000, 1000000],
    runs: 3,
    bigRuns: null,
    quick: false,
    only: [...SCENARIOS],
    stores: ['postgres', 'pglite'],
    pgUrl: 'postgres://postgres@127.0.0.1:5432/postgres',
    out: null,
    keep: false,
    loadSeconds: 10,
    listRequests: 100,
    help: false,
  };
  let rowsGiven = false;
  let runsGiven = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const [flag, inline] = a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, undefined];
    const value = () => {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new Error(`${flag} needs a value`);
      return v;
    };
    const list = () => value().split(',').map((s) => s.trim()).filter(Boolean);
    switch (flag) {
      case '--rows':
        o.rows = list().map(parseCount);
        rowsGiven = true;
        break;
      case '--runs':
        o.runs = Number(value());
        if (!Number.isInteger(o.runs) || o.runs < 1) throw new Error('--runs must be a positive integer');
        runsGiven = true;
        break;
      case '--big-runs':
        o.bigRuns = Number(value());
        if (!Number.isInteger(o.bigRuns) || o.bigRuns < 1) throw new Error('--big-runs must be a positive integer');
        break;
      case '--quick':
        o.quick = true;
        break;
      case '--only':
        o.only = list();
        for (const s of o.only) if (!SCENARIOS.includes(s)) throw new Error(`unknown scenario ${s} (one of ${SCENARIOS.join(', ')})`);
        break;
      case '--stores':
        o.stores = list();
        for (const s of o.stores) if (!['postgres', 'pglite'].includes(s)) throw new Error(`unknown store ${s}`);
        break;
      case '--pg-url':
        o.pgUrl = value();
        break;
      case '--out':
        o.out = value();
        break;
      case '--keep':
        o.keep = true;
        break;
      case '-h':
      case '--help':
        o.help = true;
        break;
      default:
        throw new Error(`unknown option ${a}\n${USAGE}`);
    }
  }
  if (o.quick) {
    if (!rowsGiven) o.rows = [10000];
    if (!runsGiven) o.runs = 1;
    o.loadSeconds = 3;
    o.listRequests = 30;
  }
  o.rows = [...new Set(o.rows)].sort((a, b) => a - b);
  // only a full run (every scenario, both stores) replaces BENCHMARKS.md unless told where to write
  const partial = o.only.length < SCENARIOS.length || o.stores.length < 2;
  o.out ??= o.quick ? 'bench/out/quick.md' : partial ? 'bench/out/partial.md' : 'BENCHMARKS.md';
  return o;
}

/** How many runs the import/export scenarios make at `rows`. */
export function runsFor(o, rows) {
  return rows >= 1e6 && o.bigRuns ? o.bigRuns : o.runs;
}

/** "100k" / "1M" / "100000" → a row count. */
export function parseCount(s) {
  const m = /^(\d+(?:\.\d+)?)([kKmM]?)$/.exec(s);
  if (!m) throw new Error(`bad row count ${s}`);
  const n = Number(m[1]) * (m[2].toLowerCase() === 'k' ? 1e3 : m[2].toLowerCase() === 'm' ? 1e6 : 1);
  if (!Number.isInteger(n) || n < 1) throw new Error(`bad row count ${s}`);
  return n;
}
