// @ts-check
/**
 * What a service's processes use, read from /proc (Linux): CPU time, the figure that tells what a
 * request costs on a busy host, and resident memory.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'

/** Clock ticks of /proc's times (USER_HZ, 100 on Linux). */
const MS_PER_TICK = 10

/**
 * The fields of /proc/<pid>/stat (or of a thread's, `<pid>/task/<tid>`) after the parenthesised
 * command name (state first), or undefined when the process is gone or this is not Linux.
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
 * CPU time (ms) of each live thread of process `pid` so far, user and system apart, by thread id,
 * from /proc/<pid>/task (Linux); an empty map elsewhere or when `pid` is gone.
 * @param {number} pid @returns {Map<number, { userMs: number, systemMs: number }>}
 */
export function threadCpuMs(pid) {
  /** @type {Map<number, { userMs: number, systemMs: number }>} */
  const threads = new Map()
  const tasks = `/proc/${pid}/task`
  if (!existsSync(tasks)) return threads
  for (const tid of readdirSync(tasks)) {
    const fields = statFields(`${pid}/task/${tid}`)
    if (fields) threads.set(Number(tid), { userMs: Number(fields[11]) * MS_PER_TICK, systemMs: Number(fields[12]) * MS_PER_TICK })
  }
  return threads
}

/** `pid` and every live process it started, directly or not. @param {number} pid @returns {number[]} */
function processTree(pid) {
  /** @type {Map<number, number[]>} */
  const children = new Map()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    const parent = Number(statFields(entry)?.[1])
    if (Number.isFinite(parent)) children.set(parent, [...(children.get(parent) ?? []), Number(entry)])
  }
  /** @param {number} process @returns {number[]} */
  const below = (process) => [process, ...(children.get(process) ?? []).flatMap(below)]
  return below(pid)
}

/**
 * CPU time (ms) of process `pid` and of every process it started: its live descendants' own, and
 * what the children they have already waited for used (cutime, cstime), so that a sandbox process
 * that ran a flow function and ended still counts. Undefined when `pid` is gone or this is not Linux.
 * @param {number} pid
 */
export function serviceCpuMs(pid) {
  if (!statFields(pid)) return undefined
  return processTree(pid).reduce((sum, process) => {
    const own = statFields(process)
    // utime, stime, cutime, cstime: fields 14 to 17 of the whole line.
    return sum + (own ? [11, 12, 13, 14].reduce((ticks, index) => ticks + Number(own[index]), 0) * MS_PER_TICK : 0)
  }, 0)
}

/**
 * Resident memory (bytes) of process `pid` and its live descendants (VmRSS of each); undefined
 * when `pid` is gone or this is not Linux.
 * @param {number} pid
 */
export function serviceRssBytes(pid) {
  if (!statFields(pid)) return undefined
  return processTree(pid).reduce((sum, process) => {
    try {
      const kib = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${process}/status`, 'utf8'))?.[1]
      return sum + Number(kib ?? 0) * 1024
    } catch {
      return sum // it ended meanwhile
    }
  }, 0)
}
