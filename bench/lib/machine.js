/** What the bench ran on, for the header of BENCHMARKS.md. */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, totalmem, release } from 'node:os';
import { ROOT } from './service.js';

function version(cmd, args = ['--version']) {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim().split('\n')[0] : null;
}

/** { cores, cpu, ramGb, node, os, pglite, psql, hyperfine, date } */
export function machine() {
  const cpu = cpus();
  let pglite = '?';
  try {
    pglite = JSON.parse(readFileSync(`${ROOT}node_modules/@electric-sql/pglite/package.json`, 'utf8')).version;
  } catch {
    // leave unknown
  }
  return {
    cores: cpu.length,
    cpu: cpu[0]?.model?.replace(/\s+/g, ' ').trim() ?? '?',
    ramGb: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    os: `Linux ${release()}`,
    pglite,
    psql: version('psql'),
    hyperfine: version('hyperfine'),
    date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
  };
}
