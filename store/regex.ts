/**
 * MongoDB's `$regex` with RE2 semantics (re2js): matching takes time linear in the text, so a
 * pattern like `^(?:[\s\S]|[\s\S]){0,27}X` cannot hold a thread for seconds. The embedded store
 * evaluates every `$regex` this way; a pattern RE2 cannot run (back-references, look-arounds) or an
 * option it has no counterpart for is refused before a query runs (data-filter.ts).
 */
import { RE2JS } from 're2js'

/** `$options` letters and their RE2 flags (MongoDB's `x`, extended syntax, has none). */
const FLAGS: Readonly<Record<string, number>> = { i: RE2JS.CASE_INSENSITIVE, m: RE2JS.MULTILINE, s: RE2JS.DOTALL }

export function compileMongoRegex(pattern: string, options = ''): RE2JS {
  let flags = 0
  for (const letter of options) {
    const flag = FLAGS[letter]
    if (flag === undefined) throw new Error(`the $options letter "${letter}" is not supported (only i, m and s)`)
    flags |= flag
  }
  return RE2JS.compile(RE2JS.translateRegExp(pattern), flags)
}

/** Why `pattern` with `options` cannot run in linear time, or undefined when it can. */
export function mongoRegexProblem(pattern: string, options = ''): string | undefined {
  try {
    compileMongoRegex(pattern, options)
    return undefined
  } catch (error) {
    return (error as Error).message
  }
}
