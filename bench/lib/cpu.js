/**
 * CPU time of the processes in a scenario, from /proc (Linux): what each side of a pipeline
 * costs, so a missed target can be explained by where the machine's cores went, not just by a
 * wall-clock figure. Counts are in clock ticks (USER_HZ, 100 a second on Linux) turned into ms.
 */
import { readdirSync, readFileSync } from 'node:fs';

const TICK_MS = 10;

/** utime, stime, cutime, cstime and ppid of a process, or null once it is gone. */
function stat(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // the command name may hold spaces and parentheses: fields start after the last ')'
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { comm: text.slice(text.indexOf('(') + 1, text.lastIndexOf(')')), ppid: Number(f[1]), self: Number(f[11]) + Number(f[12]), reaped: Number(f[13]) + Number(f[14]) };
  } catch {
    return null;
  }
}

function allStats() {
  const out = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const s = stat(Number(name));
    if (s) out.set(Number(name), s);
  }
  return out;
}

/** Pids of `root` and all its live descendants. */
function tree(root, stats) {
  const kids = new Map();
  for (const [pid, s] of stats) {
    if (!kids.has(s.ppid)) kids.set(s.ppid, []);
    kids.get(s.ppid).push(pid);
  }
  const out = [];
  const todo = [root];
  while (todo.length) {
    const p = todo.pop();
    if (!stats.has(p)) continue;
    out.push(p);
    todo.push(...(kids.get(p) ?? []));
  }
  return out;
}

/**
 * CPU ms used so far by a process tree: every live member's own time plus what the members have
 * reaped of children that ended (a backend that exits moves its time into the postmaster's).
 */
export function treeCpuMs(root) {
  const stats = allStats();
  let ticks = 0;
  for (const p of tree(root, stats)) ticks += stats.get(p).self + stats.get(p).reaped;
  return ticks * TICK_MS;
}

/** The postmaster of the local PostgreSQL (a `postgres` process whose parent is not one), or null. */
export function postmasterPid() {
  const stats = allStats();
  for (const [pid, s] of stats) if (s.comm === 'postgres' && stats.get(s.ppid)?.comm !== 'postgres') return pid;
  return null;
}

/** CPU ms this process has used (the bench itself: the autocannon load generator runs in it). */
export function selfCpuMs() {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/**
 * Measures the CPU that `fn` makes each named process tree use: `{ result, cpu: { name: ms } }`.
 * `trees` maps names to root pids (null = skipped); `self: true` also counts this process.
 */
export async function cpuDuring(trees, fn) {
  const before = Object.fromEntries(Object.entries(trees).map(([k, pid]) => [k, pid ? treeCpuMs(pid) : null]));
  const self0 = selfCpuMs();
  const result = await fn();
  const cpu = {};
  for (const [k, pid] of Object.entries(trees)) if (pid && before[k] !== null) cpu[k] = treeCpuMs(pid) - before[k];
  cpu.bench = selfCpuMs() - self0;
  return { result, cpu };
}
