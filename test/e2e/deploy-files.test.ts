import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { POSTGREST_KEYS, pgrstVariable } from '../../src/cli/commands/serve-postgrest.js';
import { SERVE_SETTINGS } from '../../src/cli/commands/serve-settings.js';
import { tempDir } from '../support/stores.js';
import { BIN, catalog, ensureBuilt, ROOT } from './support.js';

/**
 * The deployment files (Dockerfile, deploy/*, docs/deploy.md) against what `catalog serve` reads
 * and what the machine's tools accept. No Docker engine is needed (none runs on the project's
 * machines); systemd-analyze and haproxy checks skip, saying so, where the tool is missing.
 */
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const DOCKERFILE = read('Dockerfile');
const UNIT = read('deploy/catalog.service');
const ENV_EXAMPLE = read('deploy/catalog.env.example');
const SYSTEMD_ANALYZE = ['/usr/bin/systemd-analyze', '/bin/systemd-analyze'].find((p) => existsSync(p));
const HAPROXY = ['/usr/sbin/haproxy', '/usr/bin/haproxy'].find((p) => existsSync(p));
if (!SYSTEMD_ANALYZE) console.warn('test/e2e/deploy-files.test.ts: the systemd unit check is SKIPPED: systemd-analyze is not installed');
if (!HAPROXY) console.warn('test/e2e/deploy-files.test.ts: the HAProxy configuration check is SKIPPED: haproxy is not installed (apt-get install -y haproxy)');

/** The runtime stage of the Dockerfile: from its last FROM on. */
const runtimeStage = DOCKERFILE.slice(DOCKERFILE.lastIndexOf('\nFROM '));

/** `KEY=value` pairs of the runtime stage's ENV instruction (continued lines joined). */
function imageEnv(): Record<string, string> {
  const env = /^ENV ((?:.*\\\n)*.*)$/m.exec(runtimeStage)?.[1] ?? '';
  return Object.fromEntries([...env.matchAll(/([A-Z_]+)=(\S+)/g)].map((m) => [m[1], m[2]]));
}

/** The assignments of an env file (comments and blank lines left out). */
function envFile(text: string): Record<string, string> {
  return Object.fromEntries(text.split('\n').filter((l) => /^[A-Z_]+=/.test(l)).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
}

describe('deployment files', () => {
  it('name only variables catalog serve reads (CATALOG_* and PostgREST PGRST_*)', () => {
    const known = new Set([...SERVE_SETTINGS.map((s) => s.env).filter(Boolean), 'CATALOG_DATA', ...Object.keys(POSTGREST_KEYS).map(pgrstVariable)]);
    const texts = [DOCKERFILE, UNIT, ENV_EXAMPLE, read('docs/deploy.md')];
    const named = new Set(texts.flatMap((t) => [...t.matchAll(/\b(?:CATALOG|PGRST)_[A-Z0-9_]*[A-Z0-9]\b/g)].map((m) => m[0])));
    expect(named.size).toBeGreaterThan(10);
    expect([...named].filter((n) => !known.has(n))).toEqual([]);
  });

  it("the image's environment with the example env file starts as intended: 0.0.0.0:3000, admin 3001, JSON logs, secrets redacted", async () => {
    ensureBuilt();
    const env = { ...imageEnv(), ...envFile(ENV_EXAMPLE) };
    expect(env.CATALOG_HOST).toBe('0.0.0.0');
    const r = await catalog(['serve', '--dump-config'], { env });
    expect(r.code, r.stderr).toBe(0);
    for (const line of ['host: "0.0.0.0"', 'port: "3000"', 'admin-port: "3001"', 'log-format: "json"', 'db-schema: "catalog"', 'jwt-secret: "<redacted>"']) {
      expect(r.stdout).toContain(line);
    }
    expect(r.stdout).toContain('postgres://catalog:<redacted>@');
  });

  it('the Dockerfile builds from the lockfile, runs catalog serve as a non-root user, checks /live, and copies only what .dockerignore lets in', () => {
    expect(DOCKERFILE).toMatch(/^RUN npm ci --ignore-scripts$/m);
    expect(DOCKERFILE).toContain(`${JSON.parse(read('package.json')).name}-*.tgz`);
    expect(runtimeStage).toMatch(/^USER [1-9]\d*:[1-9]\d*$/m);
    expect(runtimeStage).toMatch(/^ENTRYPOINT \["catalog", "serve"\]$/m);
    expect(runtimeStage).toMatch(/^HEALTHCHECK .*\n.*\/live/m);
    // .dockerignore excludes everything, then lets paths back in: every COPY source must be one of them
    const allowed = read('.dockerignore').split('\n').filter((l) => l.startsWith('!')).map((l) => l.slice(1).replace(/\/$/, ''));
    const sources = [...DOCKERFILE.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((m) => m[1].split(/\s+/));
    expect(sources.length).toBeGreaterThan(5);
    expect(sources.filter((s) => !allowed.some((a) => s === a || s.startsWith(`${a}/`)))).toEqual([]);
  });

  it.skipIf(!SYSTEMD_ANALYZE)(`deploy/catalog.service passes systemd-analyze verify${SYSTEMD_ANALYZE ? '' : ' (SKIPPED: no systemd-analyze)'}`, () => {
    // `catalog` as npm install -g puts it on the PATH: this checkout's bin stands in for it
    const dir = tempDir('unit-');
    const unit = join(dir, 'catalog.service');
    writeFileSync(unit, UNIT.replace(/^ExecStart=catalog /m, `ExecStart=${BIN} `));
    expect(readFileSync(unit, 'utf8')).toContain(`ExecStart=${BIN} serve`);
    const r = spawnSync(SYSTEMD_ANALYZE!, ['verify', '--man=no', unit], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    for (const line of ['DynamicUser=yes', 'NoNewPrivileges=yes', 'ProtectSystem=strict', 'PrivateTmp=yes', 'Restart=on-failure', 'ExecReload=kill -USR2 $MAINPID']) {
      expect(UNIT.split('\n')).toContain(line);
    }
  });

  it.skipIf(!HAPROXY)(`deploy/haproxy.cfg is a valid HAProxy configuration${HAPROXY ? '' : ' (SKIPPED: no haproxy)'}`, () => {
    const out = execFileSync(HAPROXY!, ['-c', '-f', join(ROOT, 'deploy', 'haproxy.cfg')], { encoding: 'utf8' });
    expect(out).toMatch(/Configuration file is valid/);
  });
});
