/**
 * The regex engine JSONata runs regex literals with (`jsonata(expr, { RegexEngine })`): RE2
 * semantics through re2js, so `$match`, `$replace`, `$split` and `$contains` take time linear in
 * their input whatever the pattern — `/^(a+)+$/` on "aaaa…!" cannot backtrack for seconds.
 * Patterns RE2 cannot run (back-references, look-arounds) are refused when the model is validated.
 */
import { RE2JS } from 're2js'

/** Why RE2 cannot run `pattern` (a JS regex literal of an expression), or undefined when it can. */
export function re2Problem(pattern: RegExp): string | undefined {
  try {
    RE2JS.compile(RE2JS.translateRegExp(pattern))
    return undefined
  } catch (error) {
    return `the regex /${pattern.source}/ cannot run in linear time: ${(error as Error).message}`
  }
}

/**
 * The regex engine of the model's JSON Schemas (ajv's `code.regExp`): `pattern` and
 * `patternProperties` are tenants' regexes too, checked on the engine's thread when a process starts.
 */
export const re2SchemaRegExp = Object.assign(
  (pattern: string): { test(text: string): boolean; toString(): string } => {
    const compiled = RE2JS.compile(RE2JS.translateRegExp(pattern))
    // ajv keys its compiled patterns by `toString()`: without one of its own every pattern would be
    // "[object Object]", and all of a compiler's schemas would share the first pattern it compiled.
    return { test: (text) => compiled.test(text), toString: () => `/${pattern}/` }
  },
  // Only read by ajv's standalone code generation, which the service does not use.
  { code: 're2SchemaRegExp' },
)

/**
 * What JSONata asks of a regex engine: a constructor taking the literal's RegExp (JSONata adds the
 * `g` flag) and the `exec`/`lastIndex` protocol of a global RegExp.
 */
export class Re2RegexEngine {
  lastIndex = 0
  private readonly pattern: RE2JS

  constructor(private readonly literal: RegExp) {
    this.pattern = RE2JS.compile(RE2JS.translateRegExp(literal))
  }

  /** JSONata names the literal in its error messages. */
  get source(): string {
    return this.literal.source
  }

  exec(text: string): RegExpExecArray | null {
    const matcher = this.pattern.matcher(text)
    if (this.lastIndex > text.length || !matcher.find(this.lastIndex)) {
      this.lastIndex = 0
      return null
    }
    const groups: Array<string | undefined> = [matcher.group(0) ?? '']
    for (let group = 1; group <= matcher.groupCount(); group++) groups.push(matcher.group(group) ?? undefined)
    const result = Object.assign(groups, { index: matcher.start(), input: text }) as unknown as RegExpExecArray
    this.lastIndex = matcher.end()
    return result
  }
}
