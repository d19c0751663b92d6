import t from 'tap'
import type { Collection, Store } from '../../store/port.js'
import { openTestStore, startService } from '../../services/testing/harness.js'
import { workflowClient } from '../../services/testing/workflow.js'

/** The store, until `fail` is set: then every collection call rejects as a lost database would. */
function breakableStore(store: Store): { store: Store; fail: () => void } {
  let failing = false
  const lost = async (): Promise<never> => {
    throw new Error('connection to the database lost')
  }
  const wrapped: Store = new Proxy(store, {
    get(target, property, receiver) {
      if (property !== 'collection') return Reflect.get(target, property, receiver) as unknown
      return (name: string) => {
        const collection = target.collection(name)
        return new Proxy(collection, {
          get(inner, method, innerReceiver) {
            const value = Reflect.get(inner, method, innerReceiver) as unknown
            if (typeof value !== 'function') return value
            if (!failing) return (value as (...args: unknown[]) => unknown).bind(inner)
            // find and aggregate answer a cursor at once; it is reading it that fails.
            return method === 'find' || method === 'aggregate' ? () => ({ toArray: lost }) : lost
          },
        }) as Collection
      }
    },
  })
  return { store: wrapped, fail: () => void (failing = true) }
}

t.test('engine readiness is 200 while the store answers and 503 wm5030 naming the store once it does not', async (t) => {
  const breakable = breakableStore(await openTestStore(t))
  const engine = await startService(t, 'engine', { store: breakable.store })
  const client = workflowClient(t, engine.url, 'engine')
  const ready = await client.call('getEngineReadiness', 'GET', '/readiness')
  t.equal(ready.status, 200)
  t.same(ready.body, { ready: true, checks: { store: 'ok' } })
  breakable.fail()
  const notReady = await client.call<{ code: string; message: string }>('getEngineReadiness', 'GET', '/readiness')
  t.equal(notReady.status, 503)
  t.equal(notReady.body.code, 'wm5030')
  t.match(notReady.body.message, /store unreachable: connection to the database lost/)
  t.equal((await fetch(`${engine.url}/liveness`)).status, 200, 'liveness checks no dependency')
})

t.test('gateway readiness is 200 with its engine up and 503 fm5030 naming the engine once it is gone', async (t) => {
  const store = await openTestStore(t)
  const engine = await startService(t, 'engine', { store })
  const gateway = await startService(t, 'gateway', { store, config: { engineUrl: engine.url } })
  const client = workflowClient(t, gateway.url, 'gateway')
  const ready = await client.call<{ status: string; data: unknown }>('getGatewayReadiness', 'GET', '/readiness')
  t.equal(ready.status, 200)
  t.same(ready.body, { status: 'success', data: { ready: true, checks: { store: 'ok', engine: 'ok' } } })
  await engine.app.close()
  const notReady = await client.call<{ status: string; error: { code: string; message: string } }>(
    'getGatewayReadiness',
    'GET',
    '/readiness',
  )
  t.equal(notReady.status, 503)
  t.equal(notReady.body.error.code, 'fm5030')
  t.match(notReady.body.error.message, /engine unreachable/)
  t.equal((await fetch(`${gateway.url}/liveness`)).status, 200, 'liveness checks no dependency')
})

t.test('gateway readiness is 503 when the engine answers but is not ready itself', async (t) => {
  const breakable = breakableStore(await openTestStore(t))
  const engine = await startService(t, 'engine', { store: breakable.store })
  const gateway = await startService(t, 'gateway', { store: await openTestStore(t), config: { engineUrl: engine.url } })
  breakable.fail()
  const answer = await fetch(`${gateway.url}/readiness`)
  t.equal(answer.status, 503)
  t.match(((await answer.json()) as { error: { message: string } }).error.message, /engine unreachable: its readiness answered 503/)
})
