/**
 * How a model's JSONata expressions are parsed: bounded recursion, regex literals run by RE2 (linear
 * time). The validator parses every expression of a model this way at insert, and the runtime
 * compiles them the same way, so what was accepted is what runs.
 */
import jsonata from 'jsonata'
import { re2Problem, Re2RegexEngine } from './regex-engine.js'

/** Recursion depth JSONata may reach inside one evaluation (its own guardrail). */
const MAX_EXPRESSION_DEPTH = 500
/** Items one JSONata sequence may hold, so `[1..1e9]`-style expressions fail instead of exhausting memory. */
const MAX_SEQUENCE_LENGTH = 1_000_000

/** How every expression of a model is parsed: bounded depth and sequences, regex literals run by RE2. */
const JSONATA_OPTIONS = {
  stack: MAX_EXPRESSION_DEPTH,
  sequence: MAX_SEQUENCE_LENGTH,
  RegexEngine: Re2RegexEngine as unknown as RegExpConstructor,
}

/** Parses an expression as the runtime runs it; throws JSONata's error for a syntax fault. */
export function parseExpression(source: string): jsonata.Expression {
  return jsonata(source, JSONATA_OPTIONS)
}

/** The first regex literal of a parsed expression that RE2 cannot run (why), or undefined. */
export function expressionRegexProblem(parsed: jsonata.Expression): string | undefined {
  const pending: unknown[] = [parsed.ast()]
  while (pending.length > 0) {
    const node = pending.pop()
    if (node instanceof RegExp) {
      const problem = re2Problem(node)
      if (problem) return problem
    } else if (typeof node === 'object' && node !== null) {
      pending.push(...Object.values(node))
    }
  }
  return undefined
}
