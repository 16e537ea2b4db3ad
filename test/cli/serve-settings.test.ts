import { describe, expect, it } from 'vitest';
import { defineServe } from '../../src/cli/commands/serve.js';
import { dumpServeConfig, settleServe } from '../../src/cli/commands/serve-config.js';
import { SERVE_SETTINGS, settingOption } from '../../src/cli/commands/serve-settings.js';
import { testContext } from './support.js';

// Issue 25: serve's settings are one table; the commander options, the CATALOG_* variables, the
// --config file's keys and --dump-config all come from it.
describe('serve settings table', () => {
  const cmd = defineServe(testContext().ctx);
  const byLong = new Map(cmd.options.map((o) => [o.long, o]));

  it('registers every setting as an option of serve, with its short flag, value name and help', () => {
    expect(SERVE_SETTINGS.length).toBeGreaterThan(10);
    for (const s of SERVE_SETTINGS) {
      const o = byLong.get(`--${s.flag}`);
      expect(o, s.flag).toBeDefined();
      expect(o!.flags).toBe(`${s.short ? `-${s.short}, ` : ''}--${s.flag} <${s.value}>`);
      expect(o!.required).toBe(true); // takes a value
      expect(o!.defaultValue).toBeUndefined(); // a commander default would beat the variable and the file
      expect(o!.attributeName()).toBe(s.key);
      expect(o!.description).toContain(s.help.replace(/\)$/, ''));
      if (s.env) expect(o!.description).toContain(`env ${s.env}`);
      if (s.fallback !== undefined) expect(o!.description).toContain(`default ${s.fallback}`);
    }
  });

  it('serve has no option beyond the settings but --config, --dump-config, --idle-exit (and --help)', () => {
    const others = cmd.options.map((o) => o.long).filter((l) => !SERVE_SETTINGS.some((s) => `--${s.flag}` === l));
    expect(others.sort()).toEqual(['--config', '--dump-config', '--idle-exit']);
  });

  it('names each variable after its flag, and no flag twice', () => {
    expect(new Set(SERVE_SETTINGS.map((s) => s.flag)).size).toBe(SERVE_SETTINGS.length);
    for (const s of SERVE_SETTINGS.filter((x) => x.env)) expect(s.env).toBe(`CATALOG_${s.flag.toUpperCase().replace(/-/g, '_')}`);
  });

  it('puts the variable and the default in the help line', () => {
    const port = SERVE_SETTINGS.find((s) => s.key === 'port')!;
    expect(settingOption(port)).toEqual({ flags: '-p, --port <port>', help: 'TCP port (0 picks a free one; env CATALOG_PORT; default 3000)' });
    expect(settingOption({ key: 'maxRows', flag: 'max-rows', value: 'n', help: 'most rows', env: 'CATALOG_MAX_ROWS' }).help).toBe('most rows (env CATALOG_MAX_ROWS)');
    expect(settingOption({ key: 'data', flag: 'data', value: 'dir', help: 'a directory', env: '' }).help).toBe('a directory');
  });

  it('settles a flag over its variable over the default, and dumps the table\'s flag names', async () => {
    const settled = await settleServe({ port: '8080' }, { CATALOG_PORT: '9', CATALOG_MAX_ROWS: '5', CATALOG_JWT_SECRET: 's' });
    expect(settled).toMatchObject({ port: '8080', maxRows: '5', host: '127.0.0.1', workers: '1' });
    const dump = dumpServeConfig(settled).trim().split('\n');
    expect(dump).toEqual(expect.arrayContaining(['port: "8080"', 'max-rows: "5"', 'jwt-secret: "<redacted>"']));
  });
});
