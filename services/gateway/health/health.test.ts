import { readFileSync, statSync } from 'node:fs'
import Fastify from 'fastify'
import t from 'tap'
import envelope from '../../../plugins/errors/envelope-plugin.js'
import { packageJsonPath } from '../../../lib/server/paths.js'
import { serverOptions } from '../../../plugins/service-base/server-options.js'
import { openTestStore, silentLogger, startService } from '../../testing/harness.js'
import health from './routes.js'

t.test('healthcheck answers name, version and modify from package.json, in the envelope', async (t) => {
  const { url } = await startService(t, 'gateway')
  const response = await fetch(`${url}/healthcheck`)
  t.equal(response.status, 200)
  const body = (await response.json()) as { status: string; data: Record<string, string> }
  t.equal(body.status, 'success')
  t.equal(body.data.name, 'workflow-gateway')
  t.equal(body.data.version, (JSON.parse(readFileSync(packageJsonPath, 'utf8')) as { version: string }).version)
  t.equal(body.data.modify, statSync(packageJsonPath).mtime.toISOString())
  t.ok(!Number.isNaN(Date.parse(body.data.time!)))
  t.notOk('error' in body.data)
})

t.test('an unreadable version is reported in the body, not thrown', async (t) => {
  const app = Fastify(serverOptions(silentLogger))
  await app.register(envelope)
  await app.register(health, { packageJsonPath: '/nonexistent/package.json' })
  t.teardown(() => app.close())
  const response = await app.inject({ method: 'GET', url: '/healthcheck' })
  t.equal(response.statusCode, 200)
  const body = response.json() as { data: Record<string, string> }
  t.equal(body.data.name, 'workflow-gateway')
  t.match(body.data.error, /^Cannot read version information: ENOENT/)
})

t.test('gateway liveness answers the time and checks nothing else', async (t) => {
  const { url } = await startService(t, 'gateway')
  const body = (await (await fetch(`${url}/liveness`)).json()) as { status: string; data: { time: string } }
  t.equal(body.status, 'success')
  t.same(Object.keys(body.data), ['time'])
})

t.test('with the engine down the healthcheck still answers 200 with name and version, while readiness answers 503', async (t) => {
  const store = await openTestStore(t)
  const engine = await startService(t, 'engine', { store })
  const gateway = await startService(t, 'gateway', { store, config: { engineUrl: engine.url } })
  await engine.app.close()
  const health = await fetch(`${gateway.url}/healthcheck`)
  t.equal(health.status, 200, 'the healthcheck checks no dependency')
  t.match(await health.json(), { status: 'success', data: { name: 'workflow-gateway' } })
  const readiness = await fetch(`${gateway.url}/readiness`)
  t.equal(readiness.status, 503, 'readiness is the probe that checks the engine')
  t.match(await readiness.json(), { error: { code: 'fm5030' } })
})
