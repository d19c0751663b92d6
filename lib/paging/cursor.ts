/**
 * Opaque paging cursors: the position where a page ended, as a list of strings in base64url JSON.
 * Every list endpoint encodes its own position with these, and refuses a cursor it did not issue.
 */

export function encodeCursor(parts: readonly string[]): string {
  return Buffer.from(JSON.stringify(parts)).toString('base64url')
}

/** The `length` strings a cursor holds, or undefined when it is not a cursor of that shape. */
export function decodeCursor(cursor: string, length: number): string[] | undefined {
  try {
    const decoded: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
    if (!Array.isArray(decoded) || decoded.length !== length || !decoded.every((part) => typeof part === 'string')) return undefined
    return decoded as string[]
  } catch {
    return undefined
  }
}
