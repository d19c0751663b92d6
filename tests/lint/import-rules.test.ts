// test-timeout-seconds: 300
/**
 * The import rules of .dependency-cruiser.mjs bite: small trees laid out like the repository, each
 * with one wrong-way import, are reported under the rule that forbids it, a tree of allowed imports
 * is not, and the repository itself has no violation.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import t from 'tap'
import { checkImports, type ImportCheck, violationsOf } from '../../scripts/lint/imports.mjs'
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

/** The violations the rules report on a tree of `files`. */
async function violations(t: Teardown, files: Record<string, string>): Promise<string[]> {
  return described(await checkImports(tree(t, files))).sort()
}

/** Each violation as `rule: from → to`. */
function described(check: ImportCheck): string[] {
  return violationsOf(check).map((violation) => `${violation.rule.name}: ${violation.from} → ${violation.to}`)
}

/** Trees laid out like the repository, and what the rules report on each, as `rule: from → to`. */
const TREES: { behaviour: string; files: Record<string, string>; reported: string[] }[] = [
  {
    behaviour: 'the model, or its test, importing a service is reported under model-imports-only-model-and-lib',
    files: {
      'model/types.ts': "import { start } from '../services/engine/app.js'\nexport const run = start\n",
      'model/types.test.ts': "import '../services/testing/harness.js'\n",
      'services/engine/app.ts': 'export const start = 1\n',
      'services/testing/harness.ts': 'export const harness = 1\n',
    },
    reported: [
      'model-imports-only-model-and-lib: model/types.test.ts → services/testing/harness.ts',
      'model-imports-only-model-and-lib: model/types.ts → services/engine/app.ts',
    ],
  },
  {
    behaviour: 'the runtime importing Fastify is reported under no-fastify-in-model-or-runtime',
    files: { 'runtime/interpreter.ts': "import type fastify from 'fastify'\nexport type App = typeof fastify\n" },
    reported: ['no-fastify-in-model-or-runtime: runtime/interpreter.ts → node_modules/fastify/index.js'],
  },
  {
    behaviour: 'the runtime importing an engine folder is reported under runtime-imports-only-model-and-lib',
    files: {
      'runtime/interpreter.ts': "export { load } from '../services/engine/instances/repository.js'\n",
      'services/engine/instances/repository.ts': 'export const load = 1\n',
    },
    reported: ['runtime-imports-only-model-and-lib: runtime/interpreter.ts → services/engine/instances/repository.ts'],
  },
  {
    behaviour: 'the gateway importing the engine, also dynamically, is reported under gateway-not-to-engine',
    files: {
      'services/gateway/proxy/routes.ts': "export const app = await import('../../engine/app.js')\n",
      'services/engine/app.ts': 'export const start = 1\n',
    },
    reported: ['gateway-not-to-engine: services/gateway/proxy/routes.ts → services/engine/app.ts'],
  },
  {
    behaviour: 'a plugin importing a service is reported under plugins-not-to-services, its test is not',
    files: {
      'plugins/cache/plugin.ts': "export { build } from '../../services/build.js'\n",
      'plugins/cache/plugin.test.ts': "import '../../services/testing/harness.js'\n",
      'services/build.ts': 'export const build = 1\n',
      'services/testing/harness.ts': "export { build } from '../build.js'\n",
    },
    reported: ['plugins-not-to-services: plugins/cache/plugin.ts → services/build.ts'],
  },
  {
    behaviour: 'lib/, the store and the SDK importing outside what they may are reported under their rules',
    files: {
      'lib/server/start.ts': "export { logger } from '../../plugins/logging/logger.js'\n",
      'store/open.ts': "export { build } from '../services/build.js'\n",
      'sdk/client.ts': "export { deepCopy } from '../lib/deep-copy.js'\nexport { default as fastify } from 'fastify'\n",
      'plugins/logging/logger.ts': 'export const logger = 1\n',
      'services/build.ts': 'export const build = 1\n',
      'lib/deep-copy.ts': 'export const deepCopy = 1\n',
    },
    reported: [
      'lib-and-store-not-to-services-or-plugins: lib/server/start.ts → plugins/logging/logger.ts',
      'lib-and-store-not-to-services-or-plugins: store/open.ts → services/build.ts',
      'sdk-imports-only-itself: sdk/client.ts → lib/deep-copy.ts',
      'sdk-imports-only-itself: sdk/client.ts → node_modules/fastify/index.js',
    ],
  },
  {
    behaviour: 'two folders importing each other are reported under no-folder-cycles, without any module cycle',
    files: {
      'services/engine/tasks/service.ts': "export { note } from '../notes/repository.js'\n",
      'services/engine/notes/repository.ts': 'export const note = 1\n',
      'services/engine/notes/service.ts': "export { task } from '../tasks/repository.js'\n",
      'services/engine/tasks/repository.ts': 'export const task = 1\n',
    },
    reported: [
      'no-folder-cycles: services/engine/notes → services/engine/tasks',
      'no-folder-cycles: services/engine/tasks → services/engine/notes',
    ],
  },
  {
    behaviour: 'a test importing the harness that builds its own folder is no folder cycle',
    files: {
      'services/engine/tasks/service.ts': 'export const task = 1\n',
      'services/engine/tasks/routes.test.ts': "import '../../testing/harness.js'\n",
      'services/testing/harness.ts': "export { task } from '../engine/tasks/service.js'\n",
    },
    reported: [],
  },
  {
    behaviour: 'modules importing each other are reported once under no-circular, unless the cycle passes an import type',
    files: {
      'store/schema/migrate.ts': "import { step } from './tenant-pair.js'\nexport const migrate = step\n",
      'store/schema/tenant-pair.ts': "import { migrate } from './migrate.js'\nexport const step = 1\nexport const again = migrate\n",
      'store/embedded/codec.ts': "import type { Kind } from './journal.js'\nexport const codec = (kind: Kind) => kind\n",
      'store/embedded/journal.ts': "import { codec } from './codec.js'\nexport type Kind = string\nexport const write = codec\n",
    },
    reported: ['no-circular: store/schema/migrate.ts → store/schema/tenant-pair.ts'],
  },
  {
    behaviour: 'the imports each folder may make are not reported',
    files: {
      'model/types.ts': "export { deepCopy } from '../lib/deep-copy.js'\n",
      'lib/deep-copy.ts': 'export const deepCopy = 1\n',
      'runtime/flow/run.ts': "export { deepCopy } from '../../model/types.js'\nexport { compile } from '../compile.js'\n",
      'runtime/compile.ts': "import { readFile } from 'node:fs/promises'\nexport const compile = readFile\n",
      'services/gateway/app.ts': "export { compile } from '../../runtime/compile.js'\nexport { default } from 'fastify'\n",
      'sdk/client.ts':
        "import { createHash } from 'node:crypto'\nexport { default as client } from 'openapi-fetch'\nexport const hash = createHash\n",
      'sdk/client.test.ts': "import '../services/gateway/app.js'\n",
    },
    reported: [],
  },
]

for (const { behaviour, files, reported } of TREES) {
  t.test(behaviour, async (t) => {
    t.same(await violations(t, files), reported)
  })
}

t.test('the repository has no import the rules forbid', async (t) => {
  t.same(described(await checkImports()), [], 'make imports prints each with the files behind it and the reason')
})
