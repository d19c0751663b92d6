/**
 * One process owns a data directory: `store.lock` holds the owner's pid. Two processes writing the
 * same SQLite file and files directory would each keep a stale in-memory copy and overwrite the
 * other's writes, so the second one must refuse to start.
 */
import { closeSync, openSync, readFileSync, realpathSync, unlinkSync, writeSync } from 'node:fs'
import { join, resolve } from 'node:path'

export const LOCK_FILE = 'store.lock'

/** Directories opened by this process, which its own pid in a lock file cannot tell apart from a restart. */
const openedHere = new Set<string>()

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

function readOwner(lockPath: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(lockPath, 'utf8').trim(), 10)
    return Number.isInteger(pid) && pid > 0 ? pid : undefined
  } catch {
    return undefined
  }
}

function tryCreate(lockPath: string): boolean {
  try {
    const fd = openSync(lockPath, 'wx')
    try {
      writeSync(fd, `${process.pid}\n`)
    } finally {
      closeSync(fd)
    }
    return true
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw err
  }
}

export interface DataDirLock {
  release(): void
}

/** Takes the directory's lock, taking over a lock whose process is gone; throws when it is in use. */
export function lockDataDir(dataDir: string): DataDirLock {
  const dir = resolve(dataDir)
  const realDir = realpathSync(dir)
  if (openedHere.has(realDir)) {
    throw new Error(`Data directory ${dir} is already open in this process; close that store first or choose another DATA_DIR`)
  }
  const lockPath = join(realDir, LOCK_FILE)
  while (!tryCreate(lockPath)) {
    const owner = readOwner(lockPath)
    // Our own pid in a lock we did not take is left over from an earlier process that had the same pid
    // (common in containers, where the service is often pid 1).
    if (owner !== undefined && owner !== process.pid && isAlive(owner)) {
      throw new Error(`Data directory ${dir} is in use by process ${owner} (${LOCK_FILE}); stop that process or choose another DATA_DIR`)
    }
    try {
      unlinkSync(lockPath)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
    }
  }
  openedHere.add(realDir)

  let released = false
  return {
    release(): void {
      if (released) return
      released = true
      openedHere.delete(realDir)
      if (readOwner(lockPath) === process.pid) unlinkSync(lockPath)
    },
  }
}
