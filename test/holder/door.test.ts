import { connect } from 'node:net';
import { existsSync, lstatSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Door, DOOR_FILE, DOOR_PROTOCOL, type DoorOptions, type DoorRequest, FRAME, HandBack, openDoor, processWideDifference } from '../../src/holder/door.js';
import { tempDir } from '../support/stores.js';

const ENTRY = '/opt/catalog/dist/bundle/catalog.js';

/** A request as bin/catalog.js sends it. */
const request = (over: Partial<DoorRequest> = {}, dataDir = ''): DoorRequest => ({
  protocol: DOOR_PROTOCOL,
  entry: ENTRY,
  node: process.version,
  args: ['labels', 'list'],
  env: { HOME: '/home/u', LANG: 'C.UTF-8' },
  dataDir,
  tty: [false, false, false],
  size: {},
  ...over,
});

/** Sends a request to the door and collects its frames until it closes. */
function exchange(path: string, req: DoorRequest): Promise<Array<[number, string]>> {
  return new Promise((resolve, reject) => {
    const conn = connect(path);
    const body = Buffer.from(JSON.stringify(req));
    const head = Buffer.alloc(4);
    head.writeUInt32BE(body.length);
    conn.write(Buffer.concat([head, body]));
    const chunks: Buffer[] = [];
    conn.on('data', (c: Buffer) => chunks.push(c));
    conn.on('error', reject);
    conn.on('close', () => {
      const frames: Array<[number, string]> = [];
      let all = Buffer.concat(chunks);
      while (all.length >= 5) {
        const n = all.readUInt32BE(1);
        const payload = all.subarray(5, 5 + n);
        frames.push([all[0], all[0] === FRAME.EXIT ? String(payload.readInt32BE(0)) : payload.toString('utf8')]);
        all = all.subarray(5 + n);
      }
      resolve(frames);
    });
  });
}

describe('the command door (src/holder/door.ts)', () => {
  let door: Door | null = null;
  afterEach(async () => {
    await door?.close();
    door = null;
  });

  const open = async (run: DoorOptions['run'], unchanged = () => true) => {
    const dataDir = tempDir('door-unit-');
    door = await openDoor({ dataDir, bundle: { entry: ENTRY, unchanged }, env: { HOME: '/home/u', LANG: 'C.UTF-8' }, run });
    return { dataDir, path: join(dataDir, DOOR_FILE) };
  };

  it('listens on a socket only its owner may use, and takes it away when it closes', async () => {
    const { path } = await open(async () => 0);
    expect(lstatSync(path).isSocket()).toBe(true);
    expect(lstatSync(path).mode & 0o777).toBe(0o600);
    await door!.close();
    door = null;
    expect(existsSync(path)).toBe(false);
  });

  it("frames the command's output and its exit code, the streams described as the client's", async () => {
    const seen: unknown[] = [];
    const { dataDir, path } = await open(async (req, io) => {
      seen.push([req.args, io.stdin.isTTY, io.stdout.isTTY, io.stdout.columns, io.stdout.rows, io.stderr.isTTY, io.stderr.columns, io.stdout.color]);
      await io.stdout.write('rows\n');
      await io.stderr.write('note\n');
      return 3;
    });
    const frames = await exchange(path, request({ tty: [true, true, false], size: { out: [132, 40] }, env: { HOME: '/home/u', LANG: 'C.UTF-8', NO_COLOR: '1' } }, dataDir));
    expect(frames).toEqual([[FRAME.STARTED, ''], [FRAME.STDOUT, 'rows\n'], [FRAME.STDERR, 'note\n'], [FRAME.EXIT, '3']]);
    expect(seen).toEqual([[['labels', 'list'], true, true, 132, 40, false, 0, false]]);
  });

  it('a terminal of unknown width is 80 columns wide, as node:tty says', async () => {
    let columns = -1;
    const { dataDir, path } = await open(async (_req, io) => ((columns = io.stdout.columns), 0));
    await exchange(path, request({ tty: [false, true, true], size: { out: [undefined, undefined] } }, dataDir));
    expect(columns).toBe(80);
  });

  it('hands back, without running anything, a request it cannot serve exactly', async () => {
    let ran = 0;
    const { dataDir, path } = await open(async () => (ran++, 0));
    const handBack = [[FRAME.STARTED, ''], [FRAME.HAND_BACK, '']];
    expect(await exchange(path, request({ entry: '/elsewhere/dist/bundle/catalog.js' }, dataDir))).toEqual(handBack);
    expect(await exchange(path, request({ node: 'v0.0.1' }, dataDir))).toEqual(handBack);
    expect(await exchange(path, request({ protocol: DOOR_PROTOCOL + 1 }, dataDir))).toEqual(handBack);
    expect(await exchange(path, request({}, `${dataDir}/`))).toEqual(handBack);
    expect(await exchange(path, request({ env: { HOME: '/home/u', LANG: 'C.UTF-8', TZ: 'Asia/Tokyo' } }, dataDir))).toEqual(handBack);
    expect(ran).toBe(0);
    expect(await exchange(path, request({}, dataDir))).toEqual([[FRAME.STARTED, ''], [FRAME.EXIT, '0']]);
    expect(ran).toBe(1);
  });

  it('hands back once the bundle it runs was replaced by a build', async () => {
    let built = false;
    const { dataDir, path } = await open(async () => 0, () => !built);
    built = true;
    expect(await exchange(path, request({}, dataDir))).toEqual([[FRAME.STARTED, ''], [FRAME.HAND_BACK, '']]);
  });

  it('hands back a command that gives up before it wrote anything; after, says so and fails it', async () => {
    const { dataDir, path } = await open(async (req, io) => {
      if (req.args[0] === 'late') await io.stdout.write('half');
      throw new HandBack('a question');
    });
    expect(await exchange(path, request({ args: ['early'] }, dataDir))).toEqual([[FRAME.STARTED, ''], [FRAME.HAND_BACK, '']]);
    const late = await exchange(path, request({ args: ['late'] }, dataDir));
    expect(late.map(([t]) => t)).toEqual([FRAME.STARTED, FRAME.STDOUT, FRAME.STDERR, FRAME.EXIT]);
    expect(late[2][1]).toMatch(/could not finish the command/);
    expect(late[3][1]).toBe('1');
  });

  it('opens no door where the socket path would be cut, or when the bundle changed already', async () => {
    const long = join(tempDir('door-unit-'), 'x'.repeat(120));
    expect(await openDoor({ dataDir: long, bundle: { entry: ENTRY, unchanged: () => true }, env: {}, run: async () => 0 })).toBeNull();
    expect(await openDoor({ dataDir: tempDir('door-unit-'), bundle: { entry: ENTRY, unchanged: () => false }, env: {}, run: async () => 0 })).toBeNull();
  });
});

describe('processWideDifference', () => {
  it('names a variable that changes how node itself runs when the two environments differ in it', () => {
    expect(processWideDifference({ TZ: 'UTC', PATH: '/a' }, { TZ: 'UTC', PATH: '/b', CATALOG_OUTPUT: 'json' })).toBeNull();
    expect(processWideDifference({ TZ: 'UTC' }, {})).toBe('TZ');
    expect(processWideDifference({ LC_ALL: 'C' }, { LC_ALL: 'de_DE.UTF-8' })).toBe('LC_ALL');
    expect(processWideDifference({}, { NODE_OPTIONS: '--max-old-space-size=100' })).toBe('NODE_OPTIONS');
    expect(processWideDifference({ NODE_EXTRA_CA_CERTS: '/x.pem' }, {})).toBe('NODE_EXTRA_CA_CERTS');
    expect(processWideDifference({ LANG: 'C' }, { LANG: 'C' })).toBeNull();
  });
});
