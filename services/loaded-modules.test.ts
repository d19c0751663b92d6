/**
 * A service loads the code it runs, not the code of the other service, of the store it was not
 * given, or of tracing that is off: each took a part of every start (docs/performance.md, "Start-up").
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { repoRoot } from '../lib/server/paths.js'
import { spawnCommand } from './testing/child-service.js'
import { tempDir } from './testing/harness.js'

const RECORDER = join(repoRoot, 'dist', 'services', 'testing', 'record-imports.js')

/** The URLs `entry`'s main thread imported until it listened. */
async function importsOf(t: Test, entry: 'engine/server' | 'gateway/server', env: Record<string, string> = {}): Promise<string[]> {
  const dir = tempDir(t)
  const record = join(dir, 'imports.txt')
  const service = spawnCommand(
    ['node', '--import', RECORDER, join(repoRoot, 'dist', 'services', `${entry}.js`)],
    { env: { DATA_DIR: join(dir, 'data'), ALLOW_GATEWAY_EMBEDDED_STORE: 'true', RECORD_IMPORTS_FILE: record, ...env } },
    1,
  )
  t.teardown(() => void service.child.kill('SIGKILL'))
  await service.ready
  return readFileSync(record, 'utf8').split('\n')
}

const loads = (imports: string[], part: string): boolean => imports.some((url) => url.includes(part))

t.test("the engine on the embedded store loads neither the gateway's code, the MongoDB driver nor the tracing SDK", async (t) => {
  const imports = await importsOf(t, 'engine/server')
  t.ok(loads(imports, '/dist/services/engine/app.js'), 'its own app (the recorder sees what is loaded)')
  t.notOk(loads(imports, '/dist/services/gateway/app.js'), "not the gateway's app")
  t.notOk(loads(imports, '/node_modules/@fastify/http-proxy/'), "not the gateway's proxy")
  t.notOk(loads(imports, '/node_modules/mongodb/'), 'not the MongoDB driver')
  t.notOk(loads(imports, '/node_modules/@opentelemetry/sdk-trace-node/'), 'not the tracing SDK')
})

t.test("the gateway loads neither the engine's code nor the MongoDB driver; the tracing SDK once an OTLP endpoint is set", async (t) => {
  const imports = await importsOf(t, 'gateway/server')
  t.ok(loads(imports, '/dist/services/gateway/app.js'), 'its own app')
  t.notOk(loads(imports, '/dist/services/engine/app.js'), "not the engine's app")
  t.notOk(loads(imports, '/node_modules/mongodb/'), 'not the MongoDB driver')
  t.notOk(loads(imports, '/node_modules/@opentelemetry/sdk-trace-node/'), 'not the tracing SDK')
  const traced = await importsOf(t, 'gateway/server', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' })
  t.ok(loads(traced, '/node_modules/@opentelemetry/sdk-trace-node/'), 'the tracing SDK when tracing is on')
})
