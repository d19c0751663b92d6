/**
 * Checks the import directions and cycles of .dependency-cruiser.mjs (README "Which way imports go")
 * on the TypeScript sources: `make imports`, run by `make lint` and `make test`. It prints each
 * violation with its rule, the importing file (or folder) and the imported one, and the rule's
 * comment saying why; the exit code is the number of violations.
 *
 * Two cruises: the config's rules on every module, tests included, then its folder rules without
 * the test files (why: the config's `folderRules`).
 */
import { existsSync } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { cruise, format } from 'dependency-cruiser'
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config'

/** The folders holding the project's code (tsconfig.json's `include`, and the console, which console/tsconfig.json compiles). */
export const CODE_FOLDERS = [
  'openapi/generated',
  'lib',
  'model',
  'runtime',
  'store',
  'plugins',
  'services',
  'scripts',
  'sdk',
  'tests',
  'console',
]

const CONFIG_FILE = '.dependency-cruiser.mjs'

/**
 * The repository's root: the folder of the config, also when this file runs from dist/ in a test.
 * @param {string} folder
 * @returns {string}
 */
function repositoryRoot(folder) {
  if (existsSync(path.join(folder, CONFIG_FILE))) return folder
  if (path.dirname(folder) === folder) throw new Error(`imports: no ${CONFIG_FILE} above ${import.meta.dirname}`)
  return repositoryRoot(path.dirname(folder))
}

export const REPOSITORY_ROOT = repositoryRoot(import.meta.dirname)

/**
 * @typedef {import('dependency-cruiser').ICruiseResult} CruiseResult
 * @typedef {import('dependency-cruiser').IConfiguration} Configuration
 * @typedef {{ modules: CruiseResult, folders: CruiseResult }} ImportCheck
 */

/**
 * Cruises `root` (the repository, or a tree laid out like it) with the repository's config.
 * @param {string} [root]
 * @returns {Promise<ImportCheck>}
 */
export async function checkImports(root = REPOSITORY_ROOT) {
  /** @type {{ default: Configuration, folderRules: Configuration['forbidden'], TEST_FILES: string }} */
  const config = await import(pathToFileURL(path.join(REPOSITORY_ROOT, CONFIG_FILE)).href)
  const { options = {}, ...ruleSet } = config.default
  const tsConfigFile = path.join(REPOSITORY_ROOT, options.tsConfig?.fileName ?? 'tsconfig.json')
  const transpileOptions = { tsConfig: extractTSConfig(tsConfigFile) }
  const folders = CODE_FOLDERS.filter((folder) => existsSync(path.join(root, folder)))
  const common = { ...options, baseDir: root, tsConfig: { fileName: tsConfigFile }, validate: true }
  const excluded = typeof options.exclude === 'object' && !Array.isArray(options.exclude) ? options.exclude.path : options.exclude
  const withoutTests = [excluded ?? [], config.TEST_FILES].flat()

  const modules = await cruise(folders, { ...common, ruleSet }, {}, transpileOptions)
  const folderCruise = await cruise(
    folders,
    { ...common, exclude: { path: withoutTests }, ruleSet: { forbidden: config.folderRules } },
    {},
    transpileOptions,
  )
  return { modules: asResult(modules.output), folders: asResult(folderCruise.output) }
}

/**
 * @param {string | CruiseResult} output
 * @returns {CruiseResult}
 */
function asResult(output) {
  if (typeof output === 'string') throw new Error('imports: a cruise without an output type answers its result, not text')
  return output
}

/**
 * Every violation of both cruises.
 * @param {ImportCheck} check
 */
export function violationsOf(check) {
  return [...check.modules.summary.violations, ...check.folders.summary.violations]
}

/**
 * The imports that make folder `from` (with its sub-folders) depend on folder `to`.
 * @param {CruiseResult} result
 * @param {string} from
 * @param {string} to
 * @returns {string[]}
 */
function importsBetween(result, from, to) {
  const inside = `${from}/`
  return result.modules
    .filter((module) => module.source.startsWith(inside))
    .flatMap((module) =>
      module.dependencies
        .filter((dependency) => !dependency.resolved.startsWith(inside) && path.posix.dirname(dependency.resolved) === to)
        .map((dependency) => `${module.source} → ${dependency.resolved}`),
    )
}

/**
 * The folder violations, each with its cycle and the imports that make its first step, then the
 * comments of the rules they break.
 * @param {CruiseResult} result
 * @returns {string}
 */
function folderReport(result) {
  const { violations } = result.summary
  if (violations.length === 0) return '\n✔ no folder cycles.\n'
  const lines = violations.flatMap((violation) => [
    `  ${violation.rule.severity} ${violation.rule.name}: ${violation.from} → ${violation.to}` +
      (violation.cycle ? `, in the cycle ${[violation.from, ...violation.cycle.map((step) => step.name)].join(' → ')}` : ''),
    ...importsBetween(result, violation.from, violation.to).map((line) => `      ${line}`),
  ])
  const names = new Set(violations.map((violation) => violation.rule.name))
  const comments = (result.summary.ruleSetUsed?.forbidden ?? [])
    .filter((rule) => rule.name !== undefined && names.has(rule.name))
    .map((rule) => `  ${rule.name}: ${rule.comment ?? ''}`)
  return `\n${lines.join('\n')}\n\n${comments.join('\n')}\n\nx ${violations.length} folder dependencies in cycles.\n`
}

/**
 * The report `make imports` prints: each violation with its rule, the importing file (or folder)
 * and the imported one, and why the rule is there.
 * @param {ImportCheck} check
 * @returns {Promise<string>}
 */
export async function report(check) {
  const modules = await format(check.modules, { outputType: 'err-long' })
  const folders = folderReport(check.folders)
  return `Imports between modules, tests included:\n${modules.output}\nImports between folders, test files left out:\n${folders}`
}

if (process.argv[1] && import.meta.filename === path.resolve(process.argv[1])) {
  const check = await checkImports()
  process.stdout.write(await report(check))
  process.exitCode = Math.min(violationsOf(check).length, 125)
}
