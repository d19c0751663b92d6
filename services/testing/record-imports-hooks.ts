/** Module hooks of record-imports.ts: each resolved URL, appended to RECORD_IMPORTS_FILE. */
import { appendFileSync } from 'node:fs'

interface Resolved {
  url: string
}
type NextResolve = (specifier: string, context: unknown) => Promise<Resolved>

export async function resolve(specifier: string, context: unknown, nextResolve: NextResolve): Promise<Resolved> {
  const resolved = await nextResolve(specifier, context)
  const file = process.env.RECORD_IMPORTS_FILE
  if (file) appendFileSync(file, `${resolved.url}\n`)
  return resolved
}
