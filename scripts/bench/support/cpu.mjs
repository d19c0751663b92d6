// @ts-check
/** The CPU time a service has used, the figure that tells what a request costs it on a busy host. */
import { existsSync, readdirSync, readFileSync } from 'node:fs'

/** Clock ticks of /proc's times (USER_HZ, 100 on Linux). */
const MS_PER_TICK = 10

/**
 * The fields of /proc/<pid>/stat after the parenthesised command name (state first), or undefined
 * when the process is gone or this is not Linux.
 * @param {string | number} pid
 */
function statFields(pid) {
  const stat = `/proc/${pid}/stat`
  if (!existsSync(stat)) return undefined
  try {
    const line = readFileSync(stat, 'utf8')
    return line.slice(line.lastIndexOf(')') + 2).split(' ')
  } catch {
    return undefined // it ended between the check and the read
  }
}

/**
 * CPU time (user + system, every thread, in ms) that process `pid` has used so far, from /proc
 * (Linux); undefined elsewhere.
 * @param {number} pid
 */
export function cpuMsOf(pid) {
  const fields = statFields(pid)
  // utime is field 14, stime 15 of the whole line: 11 and 12 after the command name.
  return fields && (Number(fields[11]) + Number(fields[12])) * MS_PER_TICK
}

/**
 * CPU time (ms) of process `pid` and of every process it started: its live descendants' own, and
 * what the children it has already waited for used (cutime, cstime), so that a sandbox process that
 * ran a flow function and ended still counts. Undefined when `pid` is gone or this is not Linux.
 * @param {number} pid
 */
export function serviceCpuMs(pid) {
  const fields = statFields(pid)
  if (!fields) return undefined
  /** @type {Map<number, number[]>} */
  const children = new Map()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    const parent = Number(statFields(entry)?.[1])
    if (Number.isFinite(parent)) children.set(parent, [...(children.get(parent) ?? []), Number(entry)])
  }
  /** @param {number} process @returns {number} */
  const total = (process) => {
    const own = statFields(process)
    if (!own) return 0
    // utime, stime, cutime, cstime: fields 14 to 17 of the whole line.
    const ticks = [11, 12, 13, 14].reduce((sum, index) => sum + Number(own[index]), 0)
    return ticks * MS_PER_TICK + (children.get(process) ?? []).reduce((sum, child) => sum + total(child), 0)
  }
  return total(pid)
}
