/**
 * Measures how deeply a JSON text nests arrays and objects without parsing it and without
 * recursion: one pass over the bytes, fed chunk by chunk as they arrive, with a counter and the
 * state of the string being read. Every byte of a multi-byte UTF-8 character is >= 0x80, so none
 * is taken for a bracket or a quote.
 */
const OPEN_OBJECT = 0x7b
const OPEN_ARRAY = 0x5b
const CLOSE_OBJECT = 0x7d
const CLOSE_ARRAY = 0x5d
const QUOTE = 0x22
const BACKSLASH = 0x5c

export class JsonDepthScanner {
  private depth = 0
  private inString = false
  private escaped = false

  constructor(readonly limit: number) {}

  /** Reads the next bytes of the text; false as soon as the nesting went past the limit. */
  push(chunk: Uint8Array): boolean {
    let { depth, inString, escaped } = this
    const limit = this.limit
    for (let index = 0; index < chunk.length; index++) {
      const byte = chunk[index] as number
      if (inString) {
        if (escaped) escaped = false
        else if (byte === BACKSLASH) escaped = true
        else if (byte === QUOTE) inString = false
      } else if (byte === QUOTE) {
        inString = true
      } else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
        if (++depth > limit) {
          this.depth = depth
          return false
        }
      } else if ((byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) && depth > 0) {
        depth--
      }
    }
    this.depth = depth
    this.inString = inString
    this.escaped = escaped
    return true
  }
}

/** Does the whole text nest deeper than `limit`? */
export function nestsDeeperThan(text: string | Uint8Array, limit: number): boolean {
  return !new JsonDepthScanner(limit).push(typeof text === 'string' ? Buffer.from(text) : text)
}
