import path from 'node:path'
import t from 'tap'
import { Linter } from 'eslint'
import importDirection from './import-direction.mjs'
import { repoRoot } from '../../lib/server/paths.js'

/** The rule's findings for `source` as the file at `file` (a path from the repository's root). */
function findings(file: string, source: string): string[] {
  const linter = new Linter({ configType: 'flat' })
  const config = {
    files: ['**/*.mjs'],
    languageOptions: { ecmaVersion: 'latest' as const, sourceType: 'module' as const },
    plugins: { architecture: { rules: { 'import-direction': importDirection } } },
    rules: { 'architecture/import-direction': 'error' as const },
  }
  return linter.verify(source, config, { filename: path.join(repoRoot, file) }).map((message) => message.message)
}

t.test('the model may import itself and lib/, but neither services, plugins, the store nor Fastify', async (t) => {
  t.same(findings('model/a.mjs', "import './paths.js'\nimport '../lib/deep-copy.js'\nimport 'jsonata'"), [])
  const problems = findings(
    'model/a.mjs',
    "import 'fastify'\nimport '../services/engine/app.js'\nimport '../plugins/clock/plugin.js'\nimport '../store/port.js'",
  )
  t.equal(problems.length, 4)
  t.match(problems[0], /"fastify" may not be imported here: the workflow model depends on nothing but itself/)
})

t.test('the runtime may import the model and its own modules, not another engine domain', async (t) => {
  t.same(findings('runtime/flow/a.mjs', "import '../expressions.js'\nimport '../../../../model/types.js'"), [])
  t.equal(findings('runtime/a.mjs', "import '../instances/repository.js'").length, 1)
  t.equal(findings('runtime/a.mjs', "export * from 'fastify-plugin'").length, 1)
})

t.test('the gateway never imports the engine, also through a dynamic import', async (t) => {
  t.same(findings('services/gateway/proxy/a.mjs', "import '../../../model/validation.js'"), [])
  t.match(findings('services/gateway/proxy/a.mjs', "await import('../../engine/app.js')"), [/the gateway never imports the engine/])
})

t.test('plugins, lib/ and the store never import a service; their tests may use the shared test harness', async (t) => {
  t.equal(findings('plugins/cache/a.mjs', "import '../../services/testing/harness.js'").length, 1)
  t.equal(findings('lib/server/a.mjs', "import '../../plugins/logging/logger.js'").length, 1)
  t.equal(findings('store/a.mjs', "import '../services/build.js'").length, 1)
  t.same(findings('plugins/cache/a.test.mjs', "import '../../services/testing/harness.js'"), [])
})

t.test('the SDK imports only itself, Node and its declared dependencies, so its package needs nothing of the service', async (t) => {
  t.same(
    findings('sdk/a.mjs', "import './signature.js'\nimport './generated/gateway.js'\nimport 'node:crypto'\nimport 'openapi-fetch'"),
    [],
  )
  t.match(findings('sdk/a.mjs', "import '../lib/webhooks/signature.js'"), [/the SDK is a package of its own/])
  t.equal(findings('sdk/a.mjs', "import 'fastify'").length, 1, 'a package sdk/package.json does not declare')
  t.same(findings('sdk/a.test.mjs', "import '../services/testing/harness.js'"), [], 'its tests may use the harness')
})
