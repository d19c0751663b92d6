// The architecture's import directions, checked by dependency-cruiser (README "Which way imports go").
// `make imports` (run by `make lint` and `make test`) runs scripts/lint/imports.mjs, which checks the
// default export on every module, tests included, and `folderRules` on the folders with the test files
// left out (see below why). `npm run graph` draws the import graph between folders with it.
// No rule here keeps devDependencies out of what the image runs: knip does, from the production entries
// of knip.jsonc (`make deps`).

/** Test files: some rules let them use the shared test harness (services/testing builds whole services). */
export const TEST_FILES = '\\.test\\.[cm]?[jt]s$'

/** Fastify and its plugins, as they resolve in node_modules. */
const FASTIFY = '^node_modules/(fastify|fastify-plugin|@fastify/[^/]+)/'

/**
 * A rule that files under `from` import, of the project, only what is under the folders `allowed`.
 * @param {string} name
 * @param {string} comment
 * @param {string} from
 * @param {string[]} allowed
 * @returns {import('dependency-cruiser').IForbiddenRuleType}
 */
function importsOnly(name, comment, from, allowed) {
  return {
    name,
    comment,
    severity: 'error',
    from: { path: `^${from}/` },
    to: { dependencyTypes: ['local'], pathNot: `^(${allowed.join('|')})/` },
  }
}

/** @type {import('dependency-cruiser').IForbiddenRuleType[]} */
const directions = [
  importsOnly(
    'model-imports-only-model-and-lib',
    'The workflow model depends on nothing but itself and lib/: the gateway, the runtime and the scheduler import it, ' +
      'so it may not import them (model/README.md).',
    'model',
    ['model', 'lib'],
  ),
  importsOnly(
    'runtime-imports-only-model-and-lib',
    'The runtime (the interpreter) imports only the model, lib/ and itself; the engine folders hand it what it needs ' +
      'through its ports, so it runs free of HTTP and storage (runtime/README.md).',
    'runtime',
    ['runtime', 'model', 'lib'],
  ),
  {
    name: 'no-fastify-in-model-or-runtime',
    comment: 'The model and the runtime know nothing of HTTP: the services wrap them in Fastify, never the other way round.',
    severity: 'error',
    from: { path: '^(model|runtime)/' },
    to: { path: FASTIFY },
  },
  {
    name: 'gateway-not-to-engine',
    comment: 'The gateway never imports the engine: it reaches it over HTTP, so the two can run as separate processes.',
    severity: 'error',
    from: { path: '^services/gateway/' },
    to: { path: '^services/engine/' },
  },
  {
    name: 'plugins-not-to-services',
    comment: 'Plugins are shared by both services and never import one; their tests may use the shared test harness.',
    severity: 'error',
    from: { path: '^plugins/', pathNot: TEST_FILES },
    to: { path: '^services/' },
  },
  {
    name: 'lib-and-store-not-to-services-or-plugins',
    comment: 'lib/ and the store are used by the services and plugins, never the other way round; their tests may use the harness.',
    severity: 'error',
    from: { path: '^(lib|store)/', pathNot: TEST_FILES },
    to: { path: '^(services|plugins)/' },
  },
  {
    name: 'sdk-imports-only-itself',
    comment:
      "The SDK is a package of its own (sdk/package.json): it imports only itself, Node's built-in modules and openapi-fetch, " +
      'the one dependency it declares, so its package needs nothing of the service. Its tests may use the harness.',
    severity: 'error',
    from: { path: '^sdk/', pathNot: TEST_FILES },
    to: { dependencyTypesNot: ['core'], pathNot: '^(sdk|node_modules/openapi-fetch)/' },
  },
  importsOnly(
    'console-imports-only-console-and-sdk',
    'The console runs in browsers and talks to the public API only, through the SDK (docs/console.md): of the project ' +
      'it imports nothing but itself and the SDK.',
    'console',
    ['console', 'sdk'],
  ),
  {
    name: 'console-imports-the-fetch-client-only',
    comment:
      'Of the SDK the console imports the fetch client, which needs nothing of Node.js (sdk/fetch-client.ts): the ' +
      "Node.js client's streams would not bundle for a browser.",
    severity: 'error',
    from: { path: '^console/' },
    to: { path: '^sdk/', pathNot: '^sdk/(fetch-client|generated/gateway)\\.ts$' },
  },
  {
    name: 'nothing-imports-the-console',
    comment: 'The console is a browser bundle the gateway serves as files (services/gateway/console/): no module imports it.',
    severity: 'error',
    from: { pathNot: '^console/' },
    to: { path: '^console/' },
  },
]

/** @type {import('dependency-cruiser').IForbiddenRuleType[]} */
const soundness = [
  {
    name: 'no-circular',
    comment:
      'Modules that import each other load in an order that depends on who is imported first, and one of them sees the ' +
      "other's bindings before they are set. A cycle through an `import type` is erased by the compiler and cannot do " +
      'that, so it is allowed here (between folders, no-folder-cycles still counts it).',
    severity: 'error',
    from: {},
    to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
  },
  {
    name: 'not-to-unresolvable',
    comment: 'An import the cruise cannot resolve is one no other rule can judge (the compiler resolves every one).',
    severity: 'error',
    from: {},
    to: { couldNotResolve: true },
  },
]

/**
 * Rules on folders rather than modules. scripts/lint/imports.mjs checks them on a cruise without the
 * test files: a test sits in the folder of the code it proves but builds whole services through
 * services/testing/harness.ts, so counting it would put every folder with a route test in a cycle
 * with the harness. Test support (services/testing, fixtures/, test-support.ts) is counted.
 * @type {import('dependency-cruiser').IForbiddenRuleType[]}
 */
export const folderRules = [
  {
    name: 'no-folder-cycles',
    comment:
      'Folders do not depend on each other in a cycle (type imports count): when two need each other, one names ' +
      'what it needs as an interface and the other is handed to it. A folder counts with its sub-folders.',
    severity: 'error',
    scope: 'folder',
    from: {},
    to: { circular: true },
  },
]

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [...directions, ...soundness],
  options: {
    doNotFollow: { path: '^node_modules/' },
    exclude: { path: '^(sdk/)?dist/' },
    // Imports as written, `import type` included, as the compiler reads them from tsconfig.json.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    moduleSystems: ['es6', 'cjs'],
    // Packages such as mingo export their sub-paths (mingo/util) through package.json "exports".
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
}
