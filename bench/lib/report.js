/**
 * Turns collected results into the one table the bench prints and writes to BENCHMARKS.md:
 * one line per comparison, the catalog's median next to its peer's, the ratio and the target
 * from issue 7. Ratios are "how many times the peer's speed" (higher is better) except for
 * start-up, where they are "times node -e 0" (lower is better).
 */
import { fmtKb, fmtMs, fmtRate, fmtRows } from './stats.js';
import { linkSizes } from '../scenarios/links.js';

const STORE_NAME = { pg: 'PostgreSQL', pglite: 'PGlite' };
export const LIST_QUERIES = [
  ['title', 'title search `track_title=ilike.*love*`'],
  ['isrc', 'ISRC lookup `isrc_code=eq.…`'],
  ['label1', "a label's releases + label, newest first, page 1"],
  ['label50', "a label's releases + label, newest first, page 50"],
  ['labeltracks', "a label's releases with their tracks (computed relationship), page 1"],
  ['artisttracks', "an artist's tracks across the six credit roles (computed relationship)"],
];

/** "n/a (reason)" for a missing figure, or null when it is there. */
function naText(r) {
  if (!r) return 'n/a (not run)';
  if (r.na) return `n/a (${r.na})`;
  return null;
}

function timeRate(r, rows) {
  return naText(r) ?? `${fmtMs(r.value)} · ${fmtRate((rows * 1000) / r.value)} rows/s`;
}

function verdict(ratio, target) {
  if (!target || ratio === null || !Number.isFinite(ratio)) return '';
  return (target.min !== undefined ? ratio >= target.min : ratio <= target.max) ? '✓' : '✗';
}

function targetText(t) {
  if (!t) return '—';
  return t.text ?? (t.min !== undefined ? `≥ ${t.min}×` : `≤ ${t.max}×`);
}

/**
 * A comparison line. `speed`: both are durations, ratio = peer time / catalog time.
 * `times`: ratio = catalog / peer (lower is better). `absolute`: the catalog figure against a
 * bound; `ratio` then shows the figure itself compared to the bound.
 */
function line({ scenario, store, catalog, catalogText, peer, peerR, peerText, kind = 'speed', target }) {
  const cNa = naText(catalog);
  let ratio = null;
  if (!cNa && peerR && !peerR.na) ratio = kind === 'speed' ? peerR.value / catalog.value : catalog.value / peerR.value;
  return {
    scenario,
    store,
    catalog: cNa ?? catalogText,
    peer: peer ?? '—',
    peerFigure: peer ? (naText(peerR) ?? peerText) : '—',
    ratio: ratio === null ? '—' : `${ratio.toFixed(2)}×`,
    target: targetText(target),
    met: verdict(ratio, target),
  };
}

function absolute({ scenario, store, r, text, bound, unitText }) {
  const na = naText(r);
  const met = na || bound === undefined ? '' : r.value <= bound ? '✓' : '✗';
  return { scenario, store, catalog: na ?? text, peer: '—', peerFigure: '—', ratio: '—', target: bound === undefined ? '—' : `≤ ${unitText}`, met };
}

/** `a / b / c` of CPU medians (ms) for `${prefix}.${side}.${n}`, or null when none was measured. */
function cpuText(R, prefix, n, sides, fmt = fmtMs) {
  const parts = sides.map((side) => R.get(`${prefix}.${side}.${n}`));
  if (parts.every((p) => !p || p.na)) return null;
  return parts.map((p) => (p && !p.na ? fmt(p.value) : '?')).join(' / ');
}

/** A row of CPU figures (no ratio, no target): where the cores went in a scenario. */
function cpuRow(scenario, store, text, peer, peerText) {
  return { scenario, store, catalog: text, peer: peer ?? '—', peerFigure: peerText ?? '—', ratio: '—', target: '—', met: '' };
}

/** Every table line for the options that ran. */
export function buildRows(R, o) {
  const rows = [];
  const big = o.rows[o.rows.length - 1];
  const stores = o.stores.map((s) => (s === 'postgres' ? 'pg' : 'pglite'));
  const on = (s) => o.only.includes(s);
  // Figures taken through bench/peers/engine-driver.js while the CLI command was missing.
  const viaImport = R.extra.get('via.import') === 'engine' ? ' (engine driver)' : '';
  const viaExport = R.extra.get('via.export') === 'engine' ? ' (engine driver)' : '';

  if (on('import')) {
    for (const n of o.rows) {
      for (const s of stores) {
        const store = STORE_NAME[s];
        const c = R.get(`${s}.import.catalog.${n}`);
        const ct = timeRate(c, n) + (c && !c.na ? viaImport : '');
        const sc = `import ${fmtRows(n)} rows (CSV)`;
        if (s === 'pg') {
          rows.push(line({ scenario: sc, store, catalog: c, catalogText: ct, peer: 'psql \\copy (the limit)', peerR: R.get(`pg.import.psql.${n}`), peerText: timeRate(R.get(`pg.import.psql.${n}`), n), target: { min: 0.7 } }));
          rows.push(line({ scenario: sc, store, catalog: c, catalogText: ct, peer: 'direct-SQL upsert (json_to_recordset, 1,000/batch)', peerR: R.get(`pg.import.direct.${n}`), peerText: timeRate(R.get(`pg.import.direct.${n}`), n) }));
          rows.push(line({ scenario: sc, store, catalog: c, catalogText: ct, peer: 'csvsql --insert', peerR: R.get(`pg.import.csvsql.${n}`), peerText: timeRate(R.get(`pg.import.csvsql.${n}`), n), target: { min: 5 } }));
        } else {
          rows.push(line({ scenario: sc, store, catalog: c, catalogText: ct, peer: "COPY FROM '/dev/blob' (its own limit)", peerR: R.get(`pglite.import.copy.${n}`), peerText: timeRate(R.get(`pglite.import.copy.${n}`), n), target: { min: 0.7 } }));
          rows.push(line({ scenario: sc, store, catalog: c, catalogText: ct, peer: 'direct-SQL upsert (json_to_recordset, 1,000/batch)', peerR: R.get(`pglite.import.direct.${n}`), peerText: timeRate(R.get(`pglite.import.direct.${n}`), n) }));
        }
        const peak = R.get(`${s}.import.catalog.peak.${n}`);
        rows.push(absolute({ scenario: `import ${fmtRows(n)}: peak RSS of the import process`, store, r: peak, text: peak?.value ? fmtKb(peak.value) + viaImport : '', bound: n >= 1e6 ? 200 * 1024 : undefined, unitText: '200 MB' }));
        const cpu = s === 'pg' ? cpuText(R, 'pg.import.cpu', n, ['client', 'service', 'db']) : null;
        if (cpu) rows.push(cpuRow(`import ${fmtRows(n)}: CPU time, import / service / PostgreSQL`, store, cpu, 'psql \\copy: psql / PostgreSQL', cpuText(R, 'pg.import.psql.cpu', n, ['client', 'db'])));
        const svc = R.get(`${s}.import.service.peak.${n}`);
        if (svc) rows.push(absolute({ scenario: `import ${fmtRows(n)}: peak RSS of the service`, store, r: svc, text: svc.value ? fmtKb(svc.value) : '' }));
        const m = R.get(`${s}.merge.catalog.${n}`);
        rows.push(line({
          scenario: `re-import ${fmtRows(n)} (all conflicts, merge-duplicates)`, store, catalog: m, catalogText: timeRate(m, n) + (m && !m.na ? viaImport : ''),
          peer: 'direct-SQL upsert (same file again)', peerR: R.get(`${s}.merge.direct.${n}`), peerText: timeRate(R.get(`${s}.merge.direct.${n}`), n),
          target: s === 'pg' ? { min: 1.0 } : undefined,
        }));
      }
    }
  }

  if (on('export')) {
    for (const n of o.rows) {
      for (const s of stores) {
        const store = STORE_NAME[s];
        const c = R.get(`${s}.export.catalog.${n}`);
        const peerKey = s === 'pg' ? `pg.export.psql.${n}` : `pglite.export.copy.${n}`;
        rows.push(line({
          scenario: `export ${fmtRows(n)} rows to CSV`, store, catalog: c, catalogText: timeRate(c, n) + (c && !c.na ? viaExport : ''),
          peer: s === 'pg' ? 'psql \\copy (select *) to stdout' : "COPY (select *) TO '/dev/blob'",
          peerR: R.get(peerKey), peerText: timeRate(R.get(peerKey), n), target: s === 'pg' ? { min: 0.5 } : undefined,
        }));
        const peak = R.get(`${s}.export.catalog.peak.${n}`);
        const ppeak = R.get(`${peerKey}.peak`);
        rows.push({
          ...absolute({ scenario: `export ${fmtRows(n)}: peak RSS of the export process`, store, r: peak, text: peak?.value ? fmtKb(peak.value) + viaExport : '', bound: 150 * 1024, unitText: '150 MB' }),
          peer: s === 'pg' ? 'psql' : '—',
          peerFigure: s === 'pg' ? (naText(ppeak) ?? fmtKb(ppeak.value)) : '—',
        });
        const cpu = s === 'pg' ? cpuText(R, 'pg.export.cpu', n, ['client', 'service', 'db']) : null;
        if (cpu) rows.push(cpuRow(`export ${fmtRows(n)}: CPU time, export / service / PostgreSQL`, store, cpu, 'psql: psql / PostgreSQL', cpuText(R, 'pg.export.psql.cpu', n, ['client', 'db'])));
      }
    }
    if (o.rows.length > 1) {
      for (const s of stores) {
        const lo = R.get(`${s}.export.catalog.peak.${o.rows[0]}`);
        const hi = R.get(`${s}.export.catalog.peak.${big}`);
        const ok = lo && hi && !lo.na && !hi.na;
        const growth = ok ? hi.value / lo.value : null;
        rows.push({
          scenario: `export peak RSS ${fmtRows(big)} vs ${fmtRows(o.rows[0])} (constant in rows)`,
          store: STORE_NAME[s],
          catalog: ok ? `${fmtKb(hi.value)} vs ${fmtKb(lo.value)}` : 'n/a (a size is missing)',
          peer: '—',
          peerFigure: '—',
          ratio: ok ? `${growth.toFixed(2)}×` : '—',
          target: '≤ 1.2×',
          met: ok ? (growth <= 1.2 ? '✓' : '✗') : '',
        });
      }
    }
  }

  if (on('list')) {
    for (const s of stores) {
      for (const [q, text] of LIST_QUERIES) {
        const p50 = R.get(`${s}.list.${q}.p50`);
        const p95 = R.get(`${s}.list.${q}.p95`);
        const rowsBack = R.extra.get(`${s}.list.${q}`);
        const na = naText(p50);
        rows.push({
          scenario: `list on ${fmtRows(big)} tracks: ${text} (p50 / p95)`,
          store: STORE_NAME[s],
          catalog: na ?? `${fmtMs(p50.value)} / ${fmtMs(p95?.value)}${rowsBack ? ` (${rowsBack})` : ''}`,
          peer: '—',
          peerFigure: '—',
          ratio: '—',
          target: s === 'pg' ? 'p50 ≤ 20 ms' : '—',
          met: na || s !== 'pg' ? '' : p50.value <= 20 ? '✓' : '✗',
        });
      }
    }
  }

  if (on('load')) {
    for (const s of stores) {
      const c = R.get(`${s}.load.catalog`);
      const p = R.get(`${s}.load.minimal`);
      rows.push(line({
        scenario: 'service throughput, 50-row page, 10 connections (req/s)', store: STORE_NAME[s], catalog: c,
        catalogText: naText(c) ?? `${fmtRate(c.value)} req/s`, peer: 'minimal node:http + same SQL', peerR: p,
        peerText: naText(p) ?? `${fmtRate(p?.value)} req/s`, kind: 'times', target: s === 'pg' ? { min: 0.8 } : undefined,
      }));
      const tx = R.get(`${s}.load.minimal_tx`);
      if (tx) {
        rows.push(line({
          scenario: 'service throughput, 50-row page, 10 connections (req/s)', store: STORE_NAME[s], catalog: c,
          catalogText: naText(c) ?? `${fmtRate(c.value)} req/s`, peer: 'minimal handler + BEGIN/COMMIT per request (diagnostic)', peerR: tx,
          peerText: naText(tx) ?? `${fmtRate(tx.value)} req/s`, kind: 'times',
        }));
      }
    }
  }
  if (on('workers') && stores.includes('pg')) {
    const w2 = R.get('pg.load.workers2');
    const w1 = R.get('pg.load.workers1');
    rows.push(line({
      scenario: 'catalog serve --workers 2 vs --workers 1 (req/s)', store: 'PostgreSQL', catalog: w2,
      catalogText: naText(w2) ?? `${fmtRate(w2.value)} req/s${R.extra.get('via.workers') === 'cluster' ? ' (cluster driver)' : ''}`, peer: '--workers 1', peerR: w1,
      peerText: naText(w1) ?? `${fmtRate(w1?.value)} req/s`, kind: 'times', target: { min: 1.5 },
    }));
    const cores = (w) => cpuText(R, `pg.load.workers${w}.cores`, 'x', ['service', 'db', 'bench'], (v) => v.toFixed(2));
    if (cores(2)) rows.push(cpuRow('--workers 2 vs 1: cores busy, service / PostgreSQL / load generator', 'PostgreSQL', cores(2), '--workers 1', cores(1)));
  }

  if (on('coldstart')) {
    const node = R.get('cold.node');
    const nodeText = naText(node) ?? fmtMs(node.value);
    for (const [key, what, max] of [['cold.help', '`catalog --help`', 2.5], ['cold.labels', '`catalog labels list --url` (running service)', 4]]) {
      const c = R.get(key);
      rows.push(line({ scenario: `start-up: ${what}`, store: key === 'cold.labels' ? 'PostgreSQL' : '—', catalog: c, catalogText: naText(c) ?? fmtMs(c.value), peer: '`node -e 0`', peerR: node, peerText: nodeText, kind: 'times', target: { max } }));
    }
    for (const [key, what, boundMs] of [
      ['cold.embedded.first', 'first command on a new embedded catalog (starts the background holder)', 1500],
      ['cold.embedded.later', 'later command on the embedded catalog (background holder warm)', 200],
      ['cold.embedded.inprocess', 'later command with CATALOG_KEEP_WARM=0 (opens the catalog itself)', 1000],
    ]) {
      const r = R.get(key);
      rows.push(absolute({ scenario: `start-up: ${what} (\`labels list\`)`, store: 'PGlite', r, text: r?.value ? fmtMs(r.value) : '', bound: boundMs, unitText: fmtMs(boundMs) }));
    }
  }
  if (on('startup')) {
    // issue 34: the two start-up figures on an existing embedded catalog (bench/scenarios/startup.js)
    const node = R.get('startup.node');
    const warm = R.get('startup.warm');
    const cold = R.get('startup.cold');
    rows.push(line({
      scenario: 'start-up: later `labels list` on an existing embedded catalog (background holder warm)', store: 'PGlite', catalog: warm,
      catalogText: naText(warm) ?? fmtMs(warm.value), peer: '`node -e 0` (alternating with it)', peerR: node, peerText: naText(node) ?? fmtMs(node.value),
      kind: 'times', target: { max: 1.5 },
    }));
    rows.push(absolute({ scenario: 'start-up: first `labels list` after the background holder stopped (it starts it again)', store: 'PGlite', r: cold, text: cold?.value ? fmtMs(cold.value) : '', bound: 800, unitText: fmtMs(800) }));
    const nodeCpu = R.get('startup.node.cpu');
    const warmCpu = R.get('startup.warm.cpu');
    if (warmCpu && !warmCpu.na) rows.push(cpuRow('start-up: later `labels list`, CPU time (user + system, mean; steadier on a busy machine)', 'PGlite', fmtMs(warmCpu.value), '`node -e 0`', nodeCpu?.value ? fmtMs(nodeCpu.value) : '—'));
  }
  if (on('xlsx')) {
    for (const n of o.rows.filter((x) => x <= 100_000)) {
      for (const k of ['import', 'export']) {
        const r = R.get(`xlsx.${k}.${n}`);
        const rss = R.get(`xlsx.${k}.rss.${n}`);
        rows.push(absolute({ scenario: `xlsx ${k} ${fmtRows(n)} rows (releases, 5 columns)`, store: 'PGlite', r, text: r?.value ? `${timeRate(r, n)}, peak RSS ${rss?.value ? `${rss.value.toFixed(0)} MB` : 'n/a'}` : '' }));
      }
    }
  }

  if (on('check')) {
    for (const n of o.rows.filter((x) => x <= 1_000_000)) {
      const r = R.get(`check.tracks.${n}`);
      const rss = R.get(`check.tracks.rss.${n}`);
      const found = R.extra.get(`check.tracks.${n}`);
      const exp = R.get(`pglite.export.catalog.${n}`);
      rows.push(line({
        scenario: `catalog check tracks, ${fmtRows(n)} rows (every tracks rule; peak RSS ${rss?.value ? `${rss.value.toFixed(0)} MB` : 'n/a'}${found ? `; found ${found}` : ''})`,
        store: 'PGlite', catalog: r, catalogText: naText(r) ?? timeRate(r, n), peer: 'export of the same rows (CSV)', peerR: exp,
        peerText: exp && !exp.na ? timeRate(exp, n) : '—', target: { min: 0.5 },
      }));
    }
  }

  if (on('keyed')) {
    for (const n of o.rows) {
      const first = R.get(`keyed.first.${n}`);
      const rerun = R.get(`keyed.rerun.${n}`);
      rows.push(line({
        scenario: `import ${fmtRows(n)} tracks keyed by ISRC (no ids), first run`, store: 'PostgreSQL', catalog: first, catalogText: naText(first) ?? timeRate(first, n),
        peer: 'psql \\copy of the same file', peerR: R.get(`keyed.copy.${n}`), peerText: timeRate(R.get(`keyed.copy.${n}`), n), target: { min: 0.8 },
      }));
      rows.push(line({
        scenario: `re-import ${fmtRows(n)} keyed tracks, nothing changed`, store: 'PostgreSQL', catalog: rerun, catalogText: naText(rerun) ?? timeRate(rerun, n),
        peer: 'staging table + INSERT … ON CONFLICT … IS DISTINCT FROM', peerR: R.get(`keyed.peer.${n}`), peerText: timeRate(R.get(`keyed.peer.${n}`), n), target: { min: 1 },
      }));
      rows.push(line({
        scenario: `re-import ${fmtRows(n)} keyed tracks, nothing changed`, store: 'PostgreSQL', catalog: rerun, catalogText: naText(rerun) ?? timeRate(rerun, n),
        peer: 'staging table + MERGE … WHEN MATCHED AND … IS DISTINCT FROM (issue 35)', peerR: R.get(`keyed.merge.${n}`), peerText: timeRate(R.get(`keyed.merge.${n}`), n), target: { min: 1 },
      }));
      const recheck = R.get(`keyed.recheck.${n}`);
      rows.push(line({
        scenario: `re-import ${fmtRows(n)} keyed tracks, nothing changed, --recheck (every row compared)`, store: 'PostgreSQL', catalog: recheck, catalogText: naText(recheck) ?? timeRate(recheck, n),
        peer: 'staging table + MERGE … WHEN MATCHED AND … IS DISTINCT FROM', peerR: R.get(`keyed.merge.${n}`), peerText: timeRate(R.get(`keyed.merge.${n}`), n),
      }));
      for (const k of ['first', 'rerun', 'recheck']) {
        const rss = R.get(`keyed.${k}.rss.${n}`);
        rows.push(absolute({ scenario: `keyed ${k === 'first' ? 'import' : k === 'rerun' ? 're-import' : 're-import --recheck'} ${fmtRows(n)}: peak RSS of the import process`, store: 'PostgreSQL', r: rss, text: rss?.value ? `${rss.value.toFixed(0)} MB` : '', bound: n >= 1_000_000 ? 200 : undefined, unitText: '200 MB' }));
      }
    }
  }

  if (on('links')) {
    // issue 36: loads at the database's own speed with every link guarded
    const { plain, credits } = linkSizes(o.rows);
    for (const [kind, sizes] of [['plain', plain], ['credits', credits]]) {
      for (const n of sizes) {
        const k = (side) => R.get(`links.${kind}.${side}.${n}`);
        const what = kind === 'plain' ? `import ${fmtRows(n)} tracks without credits` : `import ${fmtRows(n)} tracks with 2–4 credits each (by id and by name)`;
        const ours = k('pg.catalog');
        rows.push(line({
          scenario: what, store: 'PostgreSQL', catalog: ours, catalogText: naText(ours) ?? timeRate(ours, n),
          peer: 'psql \\copy into a copy of tracks with its indexes, no triggers (the limit)', peerR: k('pg.plain'), peerText: timeRate(k('pg.plain'), n), target: { min: kind === 'plain' ? 0.8 : 0.5 },
        }));
        rows.push(line({
          scenario: `${what}: an outside writer`, store: 'PostgreSQL', catalog: k('pg.tracks'), catalogText: naText(k('pg.tracks')) ?? `psql \\copy into tracks: ${timeRate(k('pg.tracks'), n)}`,
          peer: 'the same into the trigger-less copy', peerR: k('pg.plain'), peerText: timeRate(k('pg.plain'), n),
        }));
        if (kind === 'credits') {
          const emb = k('pglite.catalog');
          rows.push(line({
            scenario: what, store: "PGlite (embedded, in the command's process)", catalog: emb, catalogText: naText(emb) ?? timeRate(emb, n),
            peer: 'the PostgreSQL store, same import', peerR: ours, peerText: ours && !ours.na ? timeRate(ours, n) : '—', target: { min: 0.5 },
          }));
          // the path a user's default takes: the background holder, with its lighter engine (no target yet)
          const held = k('pglite.holder');
          rows.push(line({
            scenario: what, store: 'PGlite (embedded, through the background holder)', catalog: held, catalogText: naText(held) ?? timeRate(held, n),
            peer: 'the PostgreSQL store, same import', peerR: ours, peerText: ours && !ours.na ? timeRate(ours, n) : '—',
          }));
          if (n >= 1_000_000) rows.push(absolute({ scenario: `${what}: embedded store's time`, store: 'PGlite', r: emb, text: emb?.value ? fmtMs(emb.value) : '', bound: 60_000, unitText: '60 s' }));
        }
      }
    }
  }

  if (on('hostile')) {
    const g = R.get('hostile.unread.growth');
    const idle = R.get('hostile.unread.idle');
    const peak = R.get('hostile.unread.peak');
    rows.push(absolute({ scenario: '8 anonymous 60 MB POSTs with --jwt-secret: service RSS growth (idle → peak)', store: 'PGlite', r: g, text: g?.value !== undefined ? `+${g.value.toFixed(0)} MB (${idle?.value?.toFixed(0)} → ${peak?.value?.toFixed(0)} MB)` : '', bound: 100, unitText: '100 MB' }));
    const w = R.get('hostile.wait.max');
    const write = R.get('hostile.wait.write');
    rows.push(absolute({ scenario: 'readers during one large write (the embedded limit, ≈7.5 MB): longest wait', store: 'PGlite', r: w, text: w?.value !== undefined ? `${fmtMs(w.value)} (the write took ${fmtMs(write?.value ?? 0)})` : '' }));
  }
  if (on('orphans')) {
    const r = R.get('pglite.orphans.catalog');
    // 10 s: well under what bisecting every batch to single rows took (78 s for 5,000 on 2026-11-26)
    rows.push(absolute({ scenario: 'import 5k tracks crediting artists not yet imported (every row refused, 23503)', store: 'PGlite', r, text: r?.value !== undefined ? fmtMs(r.value) : '', bound: 10_000, unitText: '10 s' }));
  }
  return rows;
}

const HEAD = ['scenario', 'store', 'catalog (median)', 'compared with', 'its median', 'ratio', 'target', ''];

function cells(r) {
  return [r.scenario, r.store, r.catalog, r.peer, r.peerFigure, r.ratio, r.target, r.met];
}

/** The rows as a GitHub markdown table. */
export function markdownTable(rows) {
  const esc = (s) => String(s).replace(/\|/g, '\\|').replace(/\n/g, ' ');
  const out = [`| ${HEAD.join(' | ')} |`, `|${HEAD.map(() => '---').join('|')}|`];
  for (const r of rows) out.push(`| ${cells(r).map(esc).join(' | ')} |`);
  return out.join('\n');
}

/** The same table for a terminal: aligned columns, long cells wrapped by the terminal. */
export function textTable(rows) {
  const all = [HEAD, ...rows.map(cells)];
  const widths = HEAD.map((_, i) => Math.min(60, Math.max(...all.map((r) => String(r[i]).length))));
  const fmt = (r) => r.map((c, i) => String(c).padEnd(widths[i])).join('  ').trimEnd();
  return [fmt(HEAD), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map((r) => fmt(cells(r)))].join('\n');
}
