/**
 * Uploaded files in GridFS. The handle is the GridFS file id as a hex string; anything that is not
 * one is an unknown handle, never an error.
 */
import { type Db, GridFSBucket, MongoRuntimeError, ObjectId } from 'mongodb'
import type { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { FileStore, StoredFile } from '../port.js'

const HANDLE = /^[0-9a-f]{24}$/i

function parseHandle(storageHandle: string): ObjectId | undefined {
  return HANDLE.test(storageHandle) ? ObjectId.createFromHexString(storageHandle) : undefined
}

export class GridFsFileStore implements FileStore {
  private readonly bucket: GridFSBucket

  constructor(db: Db) {
    this.bucket = new GridFSBucket(db)
  }

  async put(source: Readable, meta: { fileName: string; contentType: string }): Promise<StoredFile> {
    const upload = this.bucket.openUploadStream(meta.fileName, { metadata: { contentType: meta.contentType } })
    try {
      await pipeline(source, upload)
    } catch (err) {
      // Without this the chunks written so far would stay behind with no file document.
      await upload.abort().catch(() => undefined)
      throw err
    }
    return { storageHandle: upload.id.toHexString(), size: upload.length }
  }

  async get(storageHandle: string): Promise<{ stream: Readable; size: number; fileName: string; contentType: string } | null> {
    const id = parseHandle(storageHandle)
    if (!id) return null
    const file = await this.bucket.find({ _id: id }, { limit: 1 }).next()
    if (!file) return null
    const contentType = typeof file.metadata?.contentType === 'string' ? file.metadata.contentType : 'application/octet-stream'
    return { stream: this.bucket.openDownloadStream(id), size: file.length, fileName: file.filename, contentType }
  }

  async delete(storageHandle: string): Promise<boolean> {
    const id = parseHandle(storageHandle)
    if (!id) return false
    try {
      await this.bucket.delete(id)
      return true
    } catch (err) {
      if (err instanceof MongoRuntimeError && err.message.startsWith('File not found')) return false
      throw err
    }
  }
}
