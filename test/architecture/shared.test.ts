import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sources, SRC } from './sources.js';

describe('src/shared/ (what both the CLI and the service use)', () => {
  it('imports nothing else from src/: it sits below every other folder', () => {
    const offenders: string[] = [];
    for (const f of sources(join(SRC, 'shared'))) {
      const text = readFileSync(f, 'utf8');
      const specs = [...text.matchAll(/^(?:import|export)\s[^;]*?from\s+'(\.[^']+)'/gms), ...text.matchAll(/import\('(\.[^']+)'\)/g)].map((m) => m[1]);
      for (const spec of specs) if (!spec.startsWith('./')) offenders.push(`${relative(SRC, f)} → ${spec}`);
    }
    expect(offenders).toEqual([]);
  });

  it('holds the one copy of each: no other file defines its own edit distance, loopback test, XDG rule or temp-file rename', () => {
    const patterns: Array<[string, RegExp]> = [
      ['an edit distance', /function\s+editDistance\b/],
      ['a loopback test on 127.', /\/\^127\\\.|startsWith\('127\.'\)/],
      ['an XDG_* variable read', /env(?:\.|\[')XDG_[A-Z]+_HOME/],
      ['a temporary name renamed into place', /`\$\{[\w.]+\}\.\$\{process\.pid\}\.tmp`|randomBytes\(\d+\)\.toString\('hex'\)\}\.(?:tmp|partial)/],
    ];
    const offenders: string[] = [];
    for (const f of sources(SRC)) {
      const rel = relative(SRC, f);
      if (rel.startsWith(`shared/`)) continue;
      const text = readFileSync(f, 'utf8');
      for (const [what, re] of patterns) if (re.test(text)) offenders.push(`${rel}: ${what}`);
    }
    // holder/door.ts listens on a temporary socket name and renames it: a socket, not a written file
    expect(offenders).toEqual(['holder/door.ts: a temporary name renamed into place']);
    // the patterns find the copies this replaced
    const before = [
      'function editDistance(a: string, b: string): number {',
      "return host === 'localhost' || /^127\\.\\d+\\.\\d+\\.\\d+$/.test(host);",
      "return isIP(host) === 4 && host.startsWith('127.');",
      "join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'catalog')",
      'const tmp = `${file}.${process.pid}.tmp`;',
      "const tmp = `${path}.${randomBytes(4).toString('hex')}.partial`;",
    ];
    expect(before.map((text) => patterns.filter(([, re]) => re.test(text)).length)).toEqual([1, 1, 1, 1, 1, 1]);
  });
});

describe('names quoted as SQL identifiers', () => {
  it('by quoteIdent (src/schema/identifiers.ts) wherever the service and the store write SQL', () => {
    // CSV doubles its quotes the same way (format/, codecs' copyText): only the SQL writers are held to it
    const doubling = /replace\(\/"\/g, '""'\)|replaceAll\('"', '""'\)/;
    const writers = [...sources(join(SRC, 'server')), ...sources(join(SRC, 'store')), join(SRC, 'schema', 'source-ids.ts'), join(SRC, 'schema', 'identifiers.ts')]
      .filter((f) => doubling.test(readFileSync(f, 'utf8')))
      .map((f) => relative(SRC, f).split('\\').join('/'));
    expect(writers).toEqual(['schema/identifiers.ts']);
    // the pattern finds the copies this replaced
    expect(doubling.test("const q = (s: string) => `\"${s.replace(/\"/g, '\"\"')}\"`;")).toBe(true);
  });
});
