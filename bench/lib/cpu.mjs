/**
 * Where the CPU went during a measured run (Linux only; null elsewhere): the server process
 * (utime+stime from /proc/<pid>/stat, all its threads), the bench process itself (autocannon,
 * process.cpuUsage()), everything else inside this machine (busy time from /proc/stat minus
 * those two: other processes, and kernel threads such as the filesystem journal doing the
 * server's writes), and steal: time this machine's virtual CPUs were ready to run but the
 * hypervisor ran something else. Figures are in cores (1.0 = one core busy for the whole run).
 * A server well under 1 core while the host is idle is waiting (fsync, locks); "other" well
 * above 0 means a noisy neighbour (another build or test run), and steal well above 0 means a
 * busy host under the virtual machine: either way the run's figures are suspect.
 */
import fs from 'node:fs';

const TICKS_PER_S = 100; // USER_HZ; `getconf CLK_TCK` is 100 on every Linux we run on

function hostTicks() {
  const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const [user, nice, system, idle, iowait, irq, softirq, steal = 0] = f;
  return { busy: user + nice + system + irq + softirq, idle: idle + iowait, steal };
}

function processTicks(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15 of stat)
}

/** utime + stime of process `pid` (all its threads), in ticks of 1/100 s; 0 once it is gone or without /proc. */
export function procTicks(pid) {
  try {
    return processTicks(pid);
  } catch {
    return 0;
  }
}

/** A snapshot to pass to {@link cpuSince}; null when /proc is not available. */
export function cpuSnapshot(pid) {
  try {
    return { at: process.hrtime.bigint(), host: hostTicks(), server: processTicks(pid), self: process.cpuUsage(), pid };
  } catch {
    return null;
  }
}

/** CPU use in cores since `before`, or null. */
export function cpuSince(before) {
  if (!before) return null;
  const after = cpuSnapshot(before.pid);
  if (!after) return null;
  const seconds = Number(after.at - before.at) / 1e9;
  const self = process.cpuUsage(before.self);
  const serverS = (after.server - before.server) / TICKS_PER_S;
  const benchS = (self.user + self.system) / 1e6;
  const busyS = (after.host.busy - before.host.busy) / TICKS_PER_S;
  const round = (x) => Math.round((x / seconds) * 100) / 100;
  return {
    server_cores: round(serverS),
    bench_cores: round(benchS),
    other_cores: round(Math.max(0, busyS - serverS - benchS)),
    steal_cores: round((after.host.steal - before.host.steal) / TICKS_PER_S),
    idle_cores: round((after.host.idle - before.host.idle) / TICKS_PER_S),
  };
}

/**
 * Cores kept busy over the next `ms` by everything on this machine (`busy`), and cores the
 * hypervisor took from it (`steal`); a quiet host is ~0 for both. Null without /proc.
 * @returns {Promise<{busy: number, steal: number} | null>}
 */
export async function hostBusyCores(ms = 1000) {
  try {
    const a = hostTicks();
    await new Promise((resolve) => setTimeout(resolve, ms));
    const b = hostTicks();
    const cores = (ticks) => Math.round((ticks / TICKS_PER_S / (ms / 1000)) * 100) / 100;
    return { busy: cores(b.busy - a.busy), steal: cores(b.steal - a.steal) };
  } catch {
    return null;
  }
}
