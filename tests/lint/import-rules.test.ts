// test-timeout-seconds: 300
/**
 * The import rules of .dependency-cruiser.mjs bite: small trees laid out like the repository, each
 * with one wrong-way import, are reported under the rule that forbids it, a tree of allowed imports
 * is not, and the repository itself has no violation.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import t from 'tap'
import { checkImports, violationsOf } from '../../scripts/lint/imports.mjs'
import { type Teardown, tempDir } from '../../services/testing/harness.js'

/** Fake packages, so an import of one resolves in node_modules/ as in the repository. */
const PACKAGES = ['fastify', 'openapi-fetch']

/** Writes `files` (path from the tree's root → source) into a fresh tree. */
function tree(t: Teardown, files: Record<string, string>): string {
  const root = tempDir(t, 'import-rules-')
  const packages = Object.fromEntries(
    PACKAGES.flatMap((name) => [
      [`node_modules/${name}/package.json`, JSON.stringify({ name, main: 'index.js' })],
      [`node_modules/${name}/index.js`, 'export default {}\n'],
    ]),
  )
  for (const [file, source] of Object.entries({ ...packages, ...files })) {
    mkdirSync(dirname(join(root, file)), { recursive: true })
    writeFileSync(join(root, file), source)
  }
  return root
}

/** The violations of `files`, each as `rule: from → to`. */
async function violations(t: Teardown, files: Record<string, string>): Promise<string[]> {
  const check = await checkImports(tree(t, files))
  return violationsOf(check)
    .map((violation) => `${violation.rule.name}: ${violation.from} → ${violation.to}`)
    .sort()
}

t.test('the model, or its test, importing a service is reported under model-imports-only-model-and-lib', async (t) => {
  t.same(
    await violations(t, {
      'model/types.ts': "import { start } from '../services/engine/app.js'\nexport const run = start\n",
      'model/types.test.ts': "import '../services/testing/harness.js'\n",
      'services/engine/app.ts': 'export const start = 1\n',
      'services/testing/harness.ts': 'export const harness = 1\n',
    }),
    [
      'model-imports-only-model-and-lib: model/types.test.ts → services/testing/harness.ts',
      'model-imports-only-model-and-lib: model/types.ts → services/engine/app.ts',
    ],
  )
})

t.test('the runtime importing Fastify is reported under no-fastify-in-model-or-runtime', async (t) => {
  t.same(await violations(t, { 'runtime/interpreter.ts': "import type fastify from 'fastify'\nexport type App = typeof fastify\n" }), [
    'no-fastify-in-model-or-runtime: runtime/interpreter.ts → node_modules/fastify/index.js',
  ])
})

t.test('the runtime importing an engine folder is reported under runtime-imports-only-model-and-lib', async (t) => {
  t.same(
    await violations(t, {
      'runtime/interpreter.ts': "export { load } from '../services/engine/instances/repository.js'\n",
      'services/engine/instances/repository.ts': 'export const load = 1\n',
    }),
    ['runtime-imports-only-model-and-lib: runtime/interpreter.ts → services/engine/instances/repository.ts'],
  )
})

t.test('the gateway importing the engine, also dynamically, is reported under gateway-not-to-engine', async (t) => {
  t.same(
    await violations(t, {
      'services/gateway/proxy/routes.ts': "export const app = await import('../../engine/app.js')\n",
      'services/engine/app.ts': 'export const start = 1\n',
    }),
    ['gateway-not-to-engine: services/gateway/proxy/routes.ts → services/engine/app.ts'],
  )
})

t.test('a plugin importing a service is reported under plugins-not-to-services, its test is not', async (t) => {
  t.same(
    await violations(t, {
      'plugins/cache/plugin.ts': "export { build } from '../../services/build.js'\n",
      'plugins/cache/plugin.test.ts': "import '../../services/testing/harness.js'\n",
      'services/build.ts': 'export const build = 1\n',
      'services/testing/harness.ts': "export { build } from '../build.js'\n",
    }),
    ['plugins-not-to-services: plugins/cache/plugin.ts → services/build.ts'],
  )
})

t.test('lib/, the store and the SDK importing outside what they may are reported under their rules', async (t) => {
  t.same(
    await violations(t, {
      'lib/server/start.ts': "export { logger } from '../../plugins/logging/logger.js'\n",
      'store/open.ts': "export { build } from '../services/build.js'\n",
      'sdk/client.ts': "export { deepCopy } from '../lib/deep-copy.js'\nexport { default as fastify } from 'fastify'\n",
      'plugins/logging/logger.ts': 'export const logger = 1\n',
      'services/build.ts': 'export const build = 1\n',
      'lib/deep-copy.ts': 'export const deepCopy = 1\n',
    }),
    [
      'lib-and-store-not-to-services-or-plugins: lib/server/start.ts → plugins/logging/logger.ts',
      'lib-and-store-not-to-services-or-plugins: store/open.ts → services/build.ts',
      'sdk-imports-only-itself: sdk/client.ts → lib/deep-copy.ts',
      'sdk-imports-only-itself: sdk/client.ts → node_modules/fastify/index.js',
    ],
  )
})

t.test('two folders importing each other are reported under no-folder-cycles, without any module cycle', async (t) => {
  t.same(
    await violations(t, {
      'services/engine/tasks/service.ts': "export { note } from '../notes/repository.js'\n",
      'services/engine/notes/repository.ts': 'export const note = 1\n',
      'services/engine/notes/service.ts': "export { task } from '../tasks/repository.js'\n",
      'services/engine/tasks/repository.ts': 'export const task = 1\n',
    }),
    ['no-folder-cycles: services/engine/notes → services/engine/tasks', 'no-folder-cycles: services/engine/tasks → services/engine/notes'],
  )
})

t.test('a test importing the harness that builds its own folder is no folder cycle', async (t) => {
  t.same(
    await violations(t, {
      'services/engine/tasks/service.ts': 'export const task = 1\n',
      'services/engine/tasks/routes.test.ts': "import '../../testing/harness.js'\n",
      'services/testing/harness.ts': "export { task } from '../engine/tasks/service.js'\n",
    }),
    [],
  )
})

t.test('modules importing each other are reported once under no-circular, unless the cycle passes an import type', async (t) => {
  t.same(
    await violations(t, {
      'store/schema/migrate.ts': "import { step } from './tenant-pair.js'\nexport const migrate = step\n",
      'store/schema/tenant-pair.ts': "import { migrate } from './migrate.js'\nexport const step = 1\nexport const again = migrate\n",
      'store/embedded/codec.ts': "import type { Kind } from './journal.js'\nexport const codec = (kind: Kind) => kind\n",
      'store/embedded/journal.ts': "import { codec } from './codec.js'\nexport type Kind = string\nexport const write = codec\n",
    }),
    ['no-circular: store/schema/migrate.ts → store/schema/tenant-pair.ts'],
  )
})

t.test('the imports each folder may make are not reported', async (t) => {
  t.same(
    await violations(t, {
      'model/types.ts': "export { deepCopy } from '../lib/deep-copy.js'\n",
      'lib/deep-copy.ts': 'export const deepCopy = 1\n',
      'runtime/flow/run.ts': "export { deepCopy } from '../../model/types.js'\nexport { compile } from '../compile.js'\n",
      'runtime/compile.ts': "import { readFile } from 'node:fs/promises'\nexport const compile = readFile\n",
      'services/gateway/app.ts': "export { compile } from '../../runtime/compile.js'\nexport { default } from 'fastify'\n",
      'sdk/client.ts':
        "import { createHash } from 'node:crypto'\nexport { default as client } from 'openapi-fetch'\nexport const hash = createHash\n",
      'sdk/client.test.ts': "import '../services/gateway/app.js'\n",
    }),
    [],
  )
})

t.test('the repository has no import the rules forbid', async (t) => {
  const found = violationsOf(await checkImports()).map((violation) => `${violation.rule.name}: ${violation.from} → ${violation.to}`)
  t.same(found, [], 'make imports prints each with the reason')
})
