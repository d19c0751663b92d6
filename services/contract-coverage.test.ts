import type { RouteOptions } from 'fastify'
import t from 'tap'
import { buildService, type ServiceKind } from './build.js'
import { ContractChecker, operationsOf } from './testing/contract.js'
import { openTestStore, silentLogger, testConfig } from './testing/harness.js'

/**
 * Operations the contract documents whose implementation arrives with a later issue. The test fails
 * when one of them gets implemented (take it off this list) or when any other documented operation
 * has no route, so the list can only shrink and never hides a gap.
 */
const AWAITING_IMPLEMENTATION: Record<ServiceKind, string[]> = {
  engine: [],
  gateway: [],
}

function fastifyPath(path: string): string {
  return path.replace(/\{([^}]+)\}/g, ':$1')
}

for (const kind of ['engine', 'gateway'] as const) {
  t.test(`${kind}: every route in code is in the document, and every documented operation is served`, async (t) => {
    const routes: Array<{ method: string; url: string }> = []
    const app = await buildService(kind, {
      config: testConfig(),
      store: await openTestStore(t),
      logger: silentLogger,
      onRoute: (route: RouteOptions) => {
        for (const method of [route.method].flat()) {
          if (method !== 'HEAD' && !route.url.startsWith('/docs')) routes.push({ method, url: route.url })
        }
      },
    })
    t.teardown(() => app.close())
    const documented = operationsOf(new ContractChecker(kind).document).map((entry) => ({
      method: entry.method.toUpperCase(),
      url: fastifyPath(entry.path),
      operationId: entry.operation.operationId as string,
    }))
    for (const route of routes) {
      t.ok(
        documented.some((entry) => entry.method === route.method && entry.url === route.url),
        `${route.method} ${route.url} is documented`,
      )
    }
    for (const entry of documented) {
      const served = routes.some((route) => route.method === entry.method && route.url === entry.url)
      const awaiting = AWAITING_IMPLEMENTATION[kind].includes(entry.operationId)
      t.equal(
        served,
        !awaiting,
        awaiting ? `${entry.operationId} awaits its issue and is not served yet` : `${entry.operationId} is served`,
      )
    }
  })
}

t.test('health answers conform to their documented schemas', async (t) => {
  const { startService } = await import('./testing/harness.js')
  const engine = await startService(t, 'engine')
  const gateway = await startService(t, 'gateway')
  const engineContract = new ContractChecker('engine')
  const gatewayContract = new ContractChecker('gateway')
  t.same(engineContract.errors('getEngineLiveness', 200, await (await fetch(`${engine.url}/liveness`)).json()), [])
  t.same(gatewayContract.errors('getGatewayHealthcheck', 200, await (await fetch(`${gateway.url}/healthcheck`)).json()), [])
  t.same(gatewayContract.errors('getGatewayLiveness', 200, await (await fetch(`${gateway.url}/liveness`)).json()), [])
  t.not(
    gatewayContract.errors('getGatewayLiveness', 200, { status: 'success', data: { time: 'yesterday' } }),
    [],
    'the checker does reject a bad answer',
  )
})
