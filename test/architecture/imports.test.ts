import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importsOf, ROOT, sources, SRC } from './sources.js';

/** Strongly connected groups of more than one file (Tarjan): each is an import circle. */
function circles(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const stack: string[] = [];
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const on = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const group: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        group.push(relative(ROOT, w));
      } while (w !== v);
      if (group.length > 1) found.push(group.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return found;
}

describe('the layout keeps its promises', () => {
  const files = sources(SRC);
  const graph = new Map(files.map((f) => [f, importsOf(f)]));

  it('has no import circles among src/ files (static, type-only or dynamic imports)', () => {
    expect(circles(graph)).toEqual([]);
  });

  it('no file in import/, export/ or check/ imports cli/ or io/ drawing, or sets process-wide flags', () => {
    const offenders: string[] = [];
    for (const f of files) {
      const rel = relative(SRC, f);
      if (!/^(import|export|check)\//.test(rel)) continue;
      for (const dep of graph.get(f)!) {
        const d = relative(SRC, dep);
        if (d.startsWith('cli/') || /^io\/(spinner|style|prompt)/.test(d)) offenders.push(`${rel} → ${d}`);
      }
      if (/setFlagsFromString|process\.exit|process\.exitCode/.test(readFileSync(f, 'utf8'))) offenders.push(`${rel} touches process flags`);
    }
    expect(offenders).toEqual([]);
  });

  it('the engines (import/, export/, check/) import only downward: never each other, only the layers below', () => {
    // the allowed table: an engine reaches its own folder and these; cli/ composes engines (e.g.
    // cli/import-check.ts, check's rules as an import RowCheck), engines never reach each other
    const BELOW = ['schema', 'grammar', 'format', 'io', 'client', 'shared'];
    const ALLOWED: Record<string, readonly string[]> = { import: BELOW, export: BELOW, check: BELOW };
    const offenders: string[] = [];
    for (const f of files) {
      const rel = relative(SRC, f);
      const engine = rel.split(sep)[0];
      if (!(engine in ALLOWED)) continue;
      for (const dep of graph.get(f)!) {
        const layer = relative(SRC, dep).split(sep)[0];
        if (layer !== engine && !ALLOWED[engine].includes(layer)) offenders.push(`${rel} → ${relative(SRC, dep)}`);
      }
    }
    expect(offenders).toEqual([]);
    // the walk sees every engine and its imports (the table is not checked against nothing)
    for (const engine of Object.keys(ALLOWED)) expect(files.filter((f) => relative(SRC, f).startsWith(engine + sep) && graph.get(f)!.length > 0).length).toBeGreaterThan(0);
  });

  it('in cli/, only embedded.ts reaches server/ or store/ (the embedded catalog has one home)', () => {
    const offenders: string[] = [];
    for (const f of files) {
      const rel = relative(SRC, f);
      if (!rel.startsWith('cli/') || rel === join('cli', 'embedded.ts')) continue;
      for (const dep of graph.get(f)!) if (/^(server|store)\//.test(relative(SRC, dep))) offenders.push(`${rel} → ${relative(SRC, dep)}`);
    }
    expect(offenders).toEqual([]);
  });

  it('operator names are listed only in the operator table (grammar/operators.ts), never restated', () => {
    const ops = 'eq|neq|gt|gte|lt|lte|like|ilike|match|imatch|in|is|isdistinct|fts|plfts|phfts|wfts|cs|cd|ov|sl|sr|nxr|nxl|adj';
    // three operator names as a list or set, or three record keys (`eq: '='`) restating the table
    const lists = new RegExp(`'(${ops})'\\s*,\\s*'(${ops})'\\s*,\\s*'(${ops})'`);
    const keys = new RegExp(`^\\s*(${ops})\\s*:\\s*['"]`, 'gm');
    const offenders = files
      .filter((f) => !f.endsWith(join('grammar', 'operators.ts')))
      .filter((f) => {
        const text = readFileSync(f, 'utf8');
        return lists.test(text) || (text.match(keys)?.length ?? 0) >= 3;
      })
      .map((f) => relative(SRC, f));
    expect(offenders).toEqual([]);
    // the patterns find what they look for
    expect(lists.test("new Set(['like', 'ilike', 'match'])")).toBe(true);
    expect("const B = {\n  eq: '=',\n  neq: '<>',\n  gt: '>',\n};".match(keys)?.length).toBe(3);
  });

  it('the circle finder finds a circle when there is one', () => {
    expect(circles(new Map([['/a', ['/b']], ['/b', ['/a']], ['/c', ['/a']]])).length).toBe(1);
  });
});
