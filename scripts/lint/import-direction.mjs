/**
 * An ESLint rule for the architecture's import directions (README "Working on it"). It resolves
 * each relative import against the importing file, so a rule names folders of the repository
 * rather than the spellings of `../` that happen to reach them.
 */
import { existsSync } from 'node:fs'
import path from 'node:path'

/** The repository's root: the folder of eslint.config.js, also when this file runs from dist/ in a test. */
/**
 * @param {string} folder
 * @returns {string}
 */
function repositoryRoot(folder) {
  if (existsSync(path.join(folder, 'eslint.config.js'))) return folder
  if (path.dirname(folder) === folder) throw new Error('import-direction: no eslint.config.js above this file')
  return repositoryRoot(path.dirname(folder))
}

const ROOT = repositoryRoot(import.meta.dirname)
const TEST_FILE = /\.test\.[cm]?[jt]s$/
const FASTIFY_PACKAGES = /^(fastify|fastify-plugin|@fastify\/.+)$/

/**
 * Who may not import what. `from` and `forbidden` are folders of the repository; `exceptTests`
 * lets test files use the shared test harness (services/testing builds whole services).
 */
const LAYERS = [
  {
    from: 'model/',
    forbidden: ['services/', 'plugins/', 'store/'],
    noFastify: true,
    why: 'the workflow model depends on nothing but itself and lib/: the gateway, the runtime and the scheduler import it',
  },
  {
    from: 'runtime/',
    forbidden: ['services/', 'plugins/', 'store/'],
    allowed: ['runtime/'],
    noFastify: true,
    why: 'the runtime (the engine core) imports only the model, lib/ and itself; the engine domains hand it what it needs',
  },
  { from: 'services/gateway/', forbidden: ['services/engine/'], why: 'the gateway never imports the engine: it reaches it over HTTP' },
  { from: 'plugins/', forbidden: ['services/'], exceptTests: true, why: 'plugins are shared by both apps and never import a service' },
  {
    from: 'lib/',
    forbidden: ['services/', 'plugins/'],
    exceptTests: true,
    why: 'lib/ is used by the services and plugins, never the other way round',
  },
  {
    from: 'store/',
    forbidden: ['services/', 'plugins/'],
    exceptTests: true,
    why: 'the store is used by the services and plugins, never the other way round',
  },
  {
    from: 'sdk/',
    forbidden: [''],
    allowed: ['sdk/'],
    packages: /^(node:.+|openapi-fetch)$/,
    exceptTests: true,
    why: 'the SDK is a package of its own (sdk/package.json): it imports only itself, Node and the dependencies it declares',
  },
]

/**
 * Why `specifier` may not be imported from `importer` (a path from the repository's root), if it may not.
 * @param {string} importer
 * @param {string} specifier
 * @returns {string | undefined}
 */
function layerProblem(importer, specifier) {
  const isTest = TEST_FILE.test(importer)
  const target = specifier.startsWith('.')
    ? path.relative(ROOT, path.resolve(path.dirname(path.join(ROOT, importer)), specifier))
    : undefined
  for (const layer of LAYERS) {
    if (!importer.startsWith(layer.from) || (layer.exceptTests && isTest)) continue
    if (target === undefined) {
      if (layer.noFastify && FASTIFY_PACKAGES.test(specifier)) return layer.why
      if (layer.packages && !layer.packages.test(specifier)) return layer.why
      continue
    }
    if (layer.allowed?.some((folder) => target.startsWith(folder))) continue
    if (layer.forbidden.some((folder) => target.startsWith(folder))) return layer.why
  }
  return undefined
}

/** @type {import('eslint').Rule.RuleModule} */
export default {
  meta: {
    type: 'problem',
    docs: { description: 'Imports follow the architecture: model ← runtime ← engine domains; plugins never import services' },
  },
  create(context) {
    const importer = path.relative(ROOT, context.filename)
    /** @param {{ source?: object | null }} node */
    function check(node) {
      const specifier = node.source && 'value' in node.source ? node.source.value : undefined
      if (typeof specifier !== 'string') return
      const why = layerProblem(importer, specifier)
      if (why)
        context.report({
          node: /** @type {import('eslint').Rule.Node} */ (node.source),
          message: `"${specifier}" may not be imported here: ${why}.`,
        })
    }
    return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check, ImportExpression: check }
  },
}
