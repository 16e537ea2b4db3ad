/**
 * Child processes for the bench: timed runs with peak memory, long-running services, and
 * "is this tool installed" probes. Peak RSS comes from `/usr/bin/time -f %M` when present,
 * else from polling /proc/<pid>/status VmHWM (the kernel's own high-water mark).
 */
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const GNU_TIME = '/usr/bin/time';
const hasGnuTime = existsSync(GNU_TIME) && spawnSync(GNU_TIME, ['-f', '%M', 'true']).status === 0;

/** The absolute path of `cmd` on PATH, or null. */
export function which(cmd) {
  const r = spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
}

/** VmHWM (peak RSS) of a live process in KiB, or null once it is gone. */
export function peakRssKb(pid) {
  try {
    const m = /VmHWM:\s+(\d+)\s*kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/** Peak RSS over a process tree (the process and its direct children), in KiB. */
export function treePeakRssKb(pid) {
  let total = peakRssKb(pid) ?? 0;
  try {
    const kids = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
    for (const k of kids) total += peakRssKb(Number(k)) ?? 0;
  } catch {
    // no children file: leave the parent's figure
  }
  return total;
}

/**
 * The telling part of a command's output for an "n/a (reason)" cell: the first line that names
 * an error (a stack trace's headline), else the last `n` non-empty lines.
 */
export function tail(text, n = 1) {
  const lines = String(text ?? '').split('\n').map((l) => l.trim()).filter(Boolean);
  const error = lines.find((l) => /^(\w*Error\b|error:|catalog: )/i.test(l));
  return (error ?? lines.slice(-n).join(' | ')).slice(0, 160);
}

/**
 * Runs a command to completion and measures it.
 * Returns { ms, code, stdout, stderr, peakKb, cpuMs } (cpuMs: user + system, with GNU time only).
 * stdout goes to `stdoutFile` when given.
 */
export function runTimed(cmd, args, opts = {}) {
  const { env, cwd, stdoutFile, timeoutMs = 3_600_000 } = opts;
  const timeFile = join(tmpdir(), `bench-time-${process.pid}-${Math.random().toString(36).slice(2)}`);
  const argv = hasGnuTime ? [GNU_TIME, '-f', '%M %U %S', '-o', timeFile, cmd, ...args] : [cmd, ...args];
  const outFd = stdoutFile ? openSync(stdoutFile, 'w') : null;
  return new Promise((resolve) => {
    const started = process.hrtime.bigint();
    const child = spawn(argv[0], argv.slice(1), {
      cwd,
      env: { ...process.env, ...env },
      stdio: ['ignore', outFd ?? 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout?.setEncoding('utf8').on('data', (d) => {
      if (stdout.length < 1 << 20) stdout += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d) => {
      if (stderr.length < 1 << 20) stderr += d;
    });
    let polledKb = 0;
    const poll = hasGnuTime
      ? null
      : setInterval(() => {
          polledKb = Math.max(polledKb, peakRssKb(child.pid) ?? 0);
        }, 25);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code, signal) => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      clearTimeout(timer);
      if (poll) clearInterval(poll);
      if (outFd !== null) closeSync(outFd);
      let peakKb = polledKb || null;
      let cpuMs = null;
      if (hasGnuTime) {
        try {
          const lines = readFileSync(timeFile, 'utf8').trim().split('\n');
          const [kb, user, sys] = lines[lines.length - 1].split(' ').map(Number);
          peakKb = kb || null;
          cpuMs = Number.isFinite(user + sys) ? Math.round((user + sys) * 1000) : null;
          // GNU time writes "Command exited with non-zero status N" first; drop it from stderr.
        } catch {
          peakKb = null;
        }
        rmSync(timeFile, { force: true });
      }
      resolve({ ms, code: code ?? (signal ? 128 : 1), signal, stdout, stderr, peakKb, cpuMs });
    });
  });
}

/** Throws an NA-style error with the command's last stderr line unless it exited 0. */
export function assertOk(res, what) {
  if (res.code !== 0) {
    throw new Error(`${what} exited ${res.code}${res.signal ? ` (${res.signal})` : ''}: ${tail(res.stderr || res.stdout) || 'no output'}`);
  }
  return res;
}

/**
 * Starts a long-running process in its own process group (so a server with worker processes
 * stops as one). Returns { child, pid, output(), stop() }.
 */
export function startProcess(cmd, args, opts = {}) {
  const child = spawn(cmd, args, {
    cwd: opts.cwd,
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  const keep = (d) => {
    out += d;
    if (out.length > 65536) out = out.slice(-32768);
  };
  child.stdout.setEncoding('utf8').on('data', keep);
  child.stderr.setEncoding('utf8').on('data', keep);
  let exited = false;
  const done = new Promise((resolve) => child.on('exit', (code, signal) => {
    exited = true;
    resolve({ code, signal });
  }));
  const signalGroup = (sig) => {
    try {
      process.kill(-child.pid, sig);
    } catch {
      // group already gone
    }
  };
  return {
    child,
    pid: child.pid,
    done,
    get exited() {
      return exited;
    },
    output: () => out,
    async stop(graceMs = 10_000) {
      if (!exited) signalGroup('SIGTERM');
      const t = setTimeout(() => signalGroup('SIGKILL'), graceMs);
      await done;
      clearTimeout(t);
      // Worker processes may outlive the primary for a moment; make sure the group is gone.
      signalGroup('SIGKILL');
    },
  };
}
