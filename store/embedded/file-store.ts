/**
 * Uploaded files as plain files: `<dir>/<handle>` holds the bytes, `<dir>/<handle>.json` the name,
 * content type and size. Handles are random UUIDs and anything else is refused before it reaches a
 * path, so no handle can point outside the directory.
 */
import { randomUUID } from 'node:crypto'
import { createWriteStream, mkdirSync, readdirSync, rmSync } from 'node:fs'
import { open, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { FileStore, StoredFile } from '../port.js'

const HANDLE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const TEMP_PREFIX = '.tmp-'

interface Sidecar {
  fileName: string
  contentType: string
  size: number
}

export class DirFileStore implements FileStore {
  private readonly dir: string

  /** Creates the directory and clears temp files an interrupted upload left behind. */
  constructor(dir: string) {
    this.dir = dir
    mkdirSync(dir, { recursive: true })
    for (const name of readdirSync(dir)) {
      if (name.startsWith(TEMP_PREFIX)) rmSync(join(dir, name), { force: true })
    }
  }

  async put(source: Readable, meta: { fileName: string; contentType: string }): Promise<StoredFile> {
    const handle = randomUUID()
    const tempData = join(this.dir, `${TEMP_PREFIX}${handle}`)
    const tempSidecar = `${tempData}.json`
    try {
      // flush: fsync before the stream reports it is closed, so "resolved" means on disk.
      const sink = createWriteStream(tempData, { flags: 'wx', flush: true })
      await pipeline(source, sink)
      const sidecar: Sidecar = { fileName: meta.fileName, contentType: meta.contentType, size: sink.bytesWritten }
      await writeFile(tempSidecar, JSON.stringify(sidecar), { flag: 'wx', flush: true })
      // Bytes first, then the sidecar: a handle is only visible once both are in place.
      await rename(tempData, this.path(handle))
      await rename(tempSidecar, this.sidecarPath(handle))
      return { storageHandle: handle, size: sidecar.size }
    } catch (err) {
      await Promise.all([rm(tempData, { force: true }), rm(tempSidecar, { force: true }), rm(this.path(handle), { force: true })])
      throw err
    }
  }

  async get(storageHandle: string): Promise<{ stream: Readable; size: number; fileName: string; contentType: string } | null> {
    if (!HANDLE.test(storageHandle)) return null
    let sidecar: Sidecar
    try {
      sidecar = JSON.parse(await readFile(this.sidecarPath(storageHandle), 'utf8')) as Sidecar
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null
      throw err
    }
    try {
      // Opened now, so a delete after get() resolved cannot break the stream.
      const handle = await open(this.path(storageHandle), 'r')
      return { stream: handle.createReadStream(), ...sidecar }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null
      throw err
    }
  }

  async delete(storageHandle: string): Promise<boolean> {
    if (!HANDLE.test(storageHandle)) return false
    let existed = true
    // The sidecar goes first: without it the handle is already invisible to get().
    await rm(this.sidecarPath(storageHandle)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err
      existed = false
    })
    await rm(this.path(storageHandle), { force: true })
    return existed
  }

  private path(handle: string): string {
    return join(this.dir, handle)
  }

  private sidecarPath(handle: string): string {
    return join(this.dir, `${handle}.json`)
  }
}
