/**
 * ObjectId-shaped ids as 24-hex strings. Both stores generate these for documents inserted without an
 * `_id`, so a generated id has the same type (a string) whichever store is in use and survives JSON
 * (HTTP, SQLite) unchanged. Like an ObjectId they start with the creation second, so they sort
 * roughly by creation time.
 */
import { randomBytes } from 'node:crypto'

const processPart = randomBytes(5).toString('hex')
let counter = randomBytes(3).readUIntBE(0, 3)

export function newObjectIdHex(): string {
  counter = (counter + 1) % 0x1000000
  const seconds = Math.floor(Date.now() / 1000) % 0x100000000
  return seconds.toString(16).padStart(8, '0') + processPart + counter.toString(16).padStart(6, '0')
}
