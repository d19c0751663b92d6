/**
 * The error codes are types: each service's factory takes only the codes of its catalogue, so a
 * misspelt code, or the other service's, does not compile. Proven twice: the `@ts-expect-error`
 * lines below are checked by every `tsc -p .` (an accepted code there fails the build), and the
 * tests compile probes with the TypeScript compiler and read which calls it refuses.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import ts from 'typescript'
import { parse } from 'yaml'
import { type EngineErrorCode, engineErrorCatalogue, type GatewayErrorCode, gatewayErrorCatalogue } from '../../openapi/generated/errors.js'
import type { ErrorFactory } from '../../plugins/errors/service-error.js'
import { repoRoot } from '../../lib/server/paths.js'

/** Type-level only: never called, checked by the compiler. */
export function compileTimeChecks(engineFail: ErrorFactory<EngineErrorCode>, gatewayFail: ErrorFactory<GatewayErrorCode>): void {
  engineFail('wm3001')
  gatewayFail('fm3005')
  // @ts-expect-error a misspelt code (letter O for zero) does not compile
  engineFail('wm30O1')
  // @ts-expect-error the gateway's code is not the engine's
  engineFail('fm3005')
  // @ts-expect-error the engine's code is not the gateway's
  gatewayFail('wm3001')
}

const PROBE = join(repoRoot, '__error-codes-probe.ts')

/** Compiles `source` as a file at the repository's root; answers the program and the probe's diagnostics, by line (1-based). */
function compileProbe(source: string): { program: ts.Program; errorLines: number[] } {
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    skipLibCheck: true,
    types: ['node'],
    noEmit: true,
  }
  const host = ts.createCompilerHost(options)
  const { getSourceFile, fileExists, readFile } = host
  host.getSourceFile = (fileName, language, ...rest) =>
    fileName === PROBE ? ts.createSourceFile(fileName, source, language) : getSourceFile.call(host, fileName, language, ...rest)
  host.fileExists = (fileName) => fileName === PROBE || fileExists.call(host, fileName)
  host.readFile = (fileName) => (fileName === PROBE ? source : readFile.call(host, fileName))
  const program = ts.createProgram([PROBE], options, host)
  const probe = program.getSourceFile(PROBE)!
  const errorLines = ts
    .getPreEmitDiagnostics(program, probe)
    .filter((diagnostic) => diagnostic.file === probe && diagnostic.start !== undefined)
    .map((diagnostic) => probe.getLineAndCharacterOfPosition(diagnostic.start!).line + 1)
  return { program, errorLines }
}

/** The probe's declarations: the factories of each service and Fastify's `fail` the error plugin declares. */
const PROBE_DECLARATIONS = [
  "import type { FastifyInstance } from 'fastify'",
  "import type { EngineErrorCode, GatewayErrorCode } from './openapi/generated/errors.js'",
  "import type { ErrorFactory } from './plugins/errors/service-error.js'",
  "import './plugins/errors/plugin.js'",
  'declare const engine: ErrorFactory<EngineErrorCode>',
  'declare const gateway: ErrorFactory<GatewayErrorCode>',
  'declare const fastify: FastifyInstance',
]

/** The probe's calls, each with whether the compiler accepts it. */
const PROBE_CALLS: ReadonlyArray<{ call: string; compiles: boolean }> = [
  { call: "engine('wm3001')", compiles: true },
  { call: "engine('wm30O1')", compiles: false },
  { call: "engine('fm3005')", compiles: false },
  { call: "gateway('fm3005')", compiles: true },
  { call: "gateway('wm3001')", compiles: false },
  { call: "fastify.fail('wm3001')", compiles: true },
  { call: "fastify.fail('fm3005')", compiles: true },
  { call: "fastify.fail('xx3001')", compiles: false },
]

t.test("a misspelt code, or one of the other service, does not compile; the service's own codes do", async (t) => {
  const lines = [...PROBE_DECLARATIONS, ...PROBE_CALLS.map(({ call }) => call)]
  const { errorLines } = compileProbe(lines.join('\n'))
  const refused = errorLines.map((line) => lines[line - 1])
  t.same(
    refused,
    PROBE_CALLS.filter(({ compiles }) => !compiles).map(({ call }) => call),
    'exactly the unknown and the foreign codes are refused',
  )
})

t.test("each service's code union holds exactly the codes of its catalogue in the OpenAPI document", async (t) => {
  const { program } = compileProbe("export type { EngineErrorCode, GatewayErrorCode } from './openapi/generated/errors.js'")
  const checker = program.getTypeChecker()
  const generated = program.getSourceFile(join(repoRoot, 'openapi/generated/errors.ts'))!
  const unionMembers = (name: string): string[] => {
    const alias = generated.statements.find(
      (statement): statement is ts.TypeAliasDeclaration => ts.isTypeAliasDeclaration(statement) && statement.name.text === name,
    )!
    const type = checker.getTypeAtLocation(alias.name)
    return (type.isUnion() ? type.types : [type]).map((member) => String((member as ts.StringLiteralType).value)).sort()
  }
  const documented = (file: string): string[] =>
    Object.keys(parse(readFileSync(join(repoRoot, 'openapi', file), 'utf8'))['x-error-catalogue']).sort()

  t.same(unionMembers('EngineErrorCode'), documented('engine.yaml'), 'EngineErrorCode: the codes of engine.yaml')
  t.same(unionMembers('GatewayErrorCode'), documented('gateway.yaml'), 'GatewayErrorCode: the codes of gateway.yaml')
  t.same(Object.keys(engineErrorCatalogue).sort(), documented('engine.yaml'), 'the engine catalogue object has the same codes')
  t.same(Object.keys(gatewayErrorCatalogue).sort(), documented('gateway.yaml'), 'the gateway catalogue object has the same codes')
})
