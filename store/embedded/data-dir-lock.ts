/**
 * One process owns a data directory. Two processes writing the same SQLite file and files directory
 * would each keep a stale in-memory copy and overwrite the other's writes, so the second one must
 * refuse to start.
 *
 * The lock is held by the operating system, not inferred from a pid: `store.lock` is a SQLite
 * database of its own, opened in exclusive locking mode with an exclusive transaction kept open for
 * as long as the store is open. That is a POSIX (fcntl) lock, which the kernel drops the moment its
 * process ends, however it ends (kill -9 included), so a restart right after a crash always finds the
 * directory free, while a live owner is always seen. The owner's pid is written beside it
 * (`store.lock.pid`) only to name that process in the message.
 */
import { readFileSync, realpathSync, unlinkSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import Database from 'better-sqlite3'

export const LOCK_FILE = 'store.lock'
/** Who holds the lock, for the message only: the lock itself is the OS's. */
export const OWNER_FILE = `${LOCK_FILE}.pid`

/**
 * How long a start waits for the lock of a process that is still ending: `kill -9` is delivered at
 * once, but the kernel releases the dying process's files a moment later.
 */
const ACQUIRE_WAIT_MS = 2_000

/** Directories opened by this process: POSIX locks never conflict within one process, so these are tracked here. */
const openedHere = new Set<string>()

function readPid(path: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(path, 'utf8').trim(), 10)
    return Number.isInteger(pid) && pid > 0 ? pid : undefined
  } catch {
    return undefined
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

function inUse(dir: string, owner: number | undefined): Error {
  const by = owner === undefined ? 'another process' : `process ${owner}`
  return new Error(`Data directory ${dir} is in use by ${by} (${LOCK_FILE}); stop that process or choose another DATA_DIR`)
}

/** Opens the lock database and takes its exclusive lock; false when another process holds it. */
function tryHold(lockPath: string): Database.Database | false {
  const db = new Database(lockPath, { timeout: ACQUIRE_WAIT_MS })
  try {
    db.pragma('locking_mode = EXCLUSIVE')
    db.exec('BEGIN EXCLUSIVE')
    return db
  } catch (err) {
    db.close()
    if ((err as { code?: unknown }).code === 'SQLITE_BUSY') return false
    throw err
  }
}

/**
 * A `store.lock` written by an earlier version is a pid file, not a database: it still stops the
 * start while that pid lives; otherwise it is replaced by the lock database.
 */
function replaceLegacyPidFile(dir: string, lockPath: string): void {
  const owner = readPid(lockPath)
  if (owner !== undefined && owner !== process.pid && isAlive(owner)) throw inUse(dir, owner)
  unlinkSync(lockPath)
}

export interface DataDirLock {
  release(): void
}

/** Takes the directory's lock (waiting briefly for an owner that is ending); throws when it is in use. */
export function lockDataDir(dataDir: string): DataDirLock {
  const dir = resolve(dataDir)
  const realDir = realpathSync(dir)
  if (openedHere.has(realDir)) {
    throw new Error(`Data directory ${dir} is already open in this process; close that store first or choose another DATA_DIR`)
  }
  const lockPath = join(realDir, LOCK_FILE)
  const ownerPath = join(realDir, OWNER_FILE)
  let held: Database.Database | false
  try {
    held = tryHold(lockPath)
  } catch (err) {
    if ((err as { code?: unknown }).code !== 'SQLITE_NOTADB') throw err
    replaceLegacyPidFile(dir, lockPath)
    held = tryHold(lockPath)
  }
  if (!held) throw inUse(dir, readPid(ownerPath))
  const db = held
  try {
    writeFileSync(ownerPath, `${process.pid}\n`)
  } catch (err) {
    db.close()
    throw err
  }
  openedHere.add(realDir)

  let released = false
  return {
    release(): void {
      if (released) return
      released = true
      openedHere.delete(realDir)
      // The files stay: removing a lock file would let two processes lock two different files.
      db.close()
    },
  }
}
