// @ts-check
/** The CPU time a process has used, the figure that tells what a request costs it on a busy host. */
import { existsSync, readFileSync } from 'node:fs'

/**
 * CPU time (user + system, every thread, in ms) that process `pid` has used so far, from /proc
 * (Linux); undefined elsewhere.
 * @param {number} pid
 */
export function cpuMsOf(pid) {
  const stat = `/proc/${pid}/stat`
  if (!existsSync(stat)) return undefined
  // Fields after the parenthesised command name: state is field 3, utime 14, stime 15 (clock ticks of 10 ms).
  const line = readFileSync(stat, 'utf8')
  const fields = line.slice(line.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10
}
