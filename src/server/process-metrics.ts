import { readdirSync, readFileSync } from 'node:fs';

/** One process's standard Prometheus `process_*` figures. */
export interface ProcessFigures {
  cpuSeconds: number;
  residentBytes: number;
  /** 0 where /proc is not there. */
  virtualBytes: number;
  heapBytes: number;
  openFds: number;
  /** 0 where /proc is not there. */
  maxFds: number;
  startTimeSeconds: number;
}

/** A /proc file's text, or '' where there is none (not Linux). */
function proc(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

/**
 * This process's figures now, as Prometheus' client libraries report them: CPU from
 * `process.cpuUsage`, memory from `process.memoryUsage`, virtual size and file descriptors from
 * /proc (Linux).
 */
export function processFigures(): ProcessFigures {
  const cpu = process.cpuUsage();
  const mem = process.memoryUsage();
  const vm = /VmSize:\s*(\d+) kB/.exec(proc('/proc/self/status'));
  const limit = /Max open files\s+(\d+)/.exec(proc('/proc/self/limits'));
  let openFds = 0;
  try {
    openFds = readdirSync('/proc/self/fd').length;
  } catch {
    // not Linux
  }
  return {
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    residentBytes: mem.rss,
    virtualBytes: vm ? Number(vm[1]) * 1024 : 0,
    heapBytes: mem.heapUsed,
    openFds,
    maxFds: limit ? Number(limit[1]) : 0,
    startTimeSeconds: Math.round(Date.now() / 1000 - process.uptime()),
  };
}
