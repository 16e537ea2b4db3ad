import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importsOf, ROOT, sources, SRC } from './sources.js';

/**
 * Issue 39 (item 1): two programs over one core, enforced by the build. tsconfig.core.json (the
 * grammar, the table model and codecs, shared helpers, the CSV tokenizer and its byte codes),
 * tsconfig.service.json (server, store, the holder's lock and guard; references the core) and
 * tsconfig.cli.json (everything else; references both) are composite TypeScript projects, so a
 * file that imports outside its project and the ones it references fails `tsc -b` (TS6307):
 * the core cannot import the service or the CLI, the service cannot import the CLI.
 */

type Part = 'core' | 'service' | 'cli';
const ORDER: Record<Part, number> = { core: 0, service: 1, cli: 2 };

const includes = (name: string): string[] => (JSON.parse(readFileSync(join(ROOT, `tsconfig.${name}.json`), 'utf8')) as { include: string[] }).include;
const matches = (pattern: string, rel: string): boolean => (pattern.endsWith('/**/*.ts') ? rel.startsWith(pattern.slice(0, -'**/*.ts'.length)) : rel === pattern);
const CORE = includes('core');
const SERVICE = includes('service');

function partOf(file: string): Part {
  const rel = relative(ROOT, file);
  if (CORE.some((p) => matches(p, rel))) return 'core';
  if (SERVICE.some((p) => matches(p, rel))) return 'service';
  return 'cli';
}

describe('the three parts of src/', () => {
  const files = sources(SRC);

  it('each part holds files, and no file is in two parts', () => {
    const counts = { core: 0, service: 0, cli: 0 };
    for (const f of files) counts[partOf(f)]++;
    expect(counts.core).toBeGreaterThan(20);
    expect(counts.service).toBeGreaterThan(20);
    expect(counts.cli).toBeGreaterThan(100);
    const both = files.filter((f) => CORE.some((p) => matches(p, relative(ROOT, f))) && SERVICE.some((p) => matches(p, relative(ROOT, f))));
    expect(both).toEqual([]);
    // the CLI project is everything the other two do not list
    const cli = JSON.parse(readFileSync(join(ROOT, 'tsconfig.cli.json'), 'utf8')) as { exclude: string[] };
    expect(cli.exclude).toEqual([...CORE, ...SERVICE]);
  });

  it('no import runs back up: the core imports only the core, the service only the core and itself', () => {
    const upward: string[] = [];
    for (const f of files) {
      for (const target of importsOf(f)) {
        if (!target.startsWith(SRC)) continue;
        if (ORDER[partOf(target)] > ORDER[partOf(f)]) upward.push(`${relative(ROOT, f)} (${partOf(f)}) → ${relative(ROOT, target)} (${partOf(target)})`);
      }
    }
    expect(upward).toEqual([]);
  });

  it("the service's tests (test/server, test/store) reach no CLI file, through their helpers either", () => {
    const start = [...sources(join(ROOT, 'test', 'server')), ...sources(join(ROOT, 'test', 'store'))];
    const seen = new Set<string>();
    const queue = [...start];
    const reached: string[] = [];
    while (queue.length) {
      const f = queue.pop()!;
      if (seen.has(f)) continue;
      seen.add(f);
      for (const t of importsOf(f)) {
        if (t.startsWith(SRC)) {
          if (partOf(t) === 'cli') reached.push(`${relative(ROOT, f)} → ${relative(ROOT, t)}`);
        } else queue.push(t);
      }
    }
    expect(start.length).toBeGreaterThan(20);
    expect(reached).toEqual([]);
  });
});

/**
 * The build itself: the core and the service copied alone into a scratch tree (no CLI file there)
 * build with `tsc -b tsconfig.service.json`; a service file that imports the CLI, or a core file
 * that imports the service, makes that build fail with TS6307.
 */
describe('tsc -b keeps the parts apart', () => {
  let dir: string;
  const tsc = (): { code: number | null; out: string } => {
    const r = spawnSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-b', 'tsconfig.service.json'], { cwd: dir, encoding: 'utf8' });
    return { code: r.status, out: `${r.stdout}${r.stderr}` };
  };
  const probe = (rel: string, text: string): { code: number | null; out: string } => {
    const path = join(dir, rel);
    writeFileSync(path, text);
    try {
      return tsc();
    } finally {
      rmSync(path);
    }
  };
  let clean: { code: number | null; out: string };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'catalog-parts-'));
    for (const name of ['base', 'core', 'service']) cpSync(join(ROOT, `tsconfig.${name}.json`), join(dir, `tsconfig.${name}.json`));
    cpSync(join(ROOT, 'package.json'), join(dir, 'package.json')); // its "type": "module" makes the files ES modules
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
    const partFiles = sources(SRC).filter((f) => partOf(f) !== 'cli');
    for (const f of partFiles) {
      const to = join(dir, relative(ROOT, f));
      mkdirSync(dirname(to), { recursive: true });
      cpSync(f, to);
    }
    // a CLI file for the probes to import: present in the tree, in neither project
    mkdirSync(join(dir, 'src', 'cli'), { recursive: true });
    writeFileSync(join(dir, 'src', 'cli', 'main.ts'), 'export const cli = true;\n');
    clean = tsc();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('the core and the service build without the CLI', () => {
    expect(clean.out).toBe('');
    expect(clean.code).toBe(0);
  });

  it('a service file importing the CLI fails the build', () => {
    const r = probe('src/server/zz-forbidden.ts', "import { cli } from '../cli/main.js';\nexport const forbidden = cli;\n");
    expect(r.code).not.toBe(0);
    expect(r.out).toMatch(/error TS6307: File '.*src\/cli\/main\.ts' is not listed within the file list of project '.*tsconfig\.service\.json'/);
    // nothing else is wrong with the probe's tree
    expect(new Set(r.out.match(/error TS\d+/g))).toEqual(new Set(['error TS6307']));
  });

  it('a core file importing the service fails the build', () => {
    const r = probe('src/schema/zz-forbidden.ts', "import { createApp } from '../server/app.js';\nexport const forbidden = createApp;\n");
    expect(r.code).not.toBe(0);
    expect(r.out).toMatch(/error TS6307: File '.*src\/server\/app\.ts' is not listed within the file list of project '.*tsconfig\.core\.json'/);
    expect(new Set(r.out.match(/error TS\d+/g))).toEqual(new Set(['error TS6307']));
  });
});
