import t from 'tap'
import type { Store } from '../../../store/port.js'
import { openTestStore, startService } from '../../testing/harness.js'
import { describeApps, MODELS_COLLECTION } from './routes.js'

t.test('engine liveness answers time, name, app list and version', async (t) => {
  const { url } = await startService(t, 'engine')
  const response = await fetch(`${url}/liveness`)
  t.equal(response.status, 200)
  const body = (await response.json()) as Record<string, unknown>
  t.equal(body.name, 'workflow-engine')
  t.equal(body.appList, 'No apps found')
  t.ok(!Number.isNaN(Date.parse(body.time as string)), 'time is a date-time')
  t.match(body.versionInfo, { version: /^\d+\.\d+\.\d+/, modify: /^\d{4}-\d\d-\d\dT/ })
  t.notOk('status' in body, 'the engine answers raw, without the envelope')
})

t.test('the app list names every app that has models, once', async (t) => {
  const store = await openTestStore(t)
  await store.collection(MODELS_COLLECTION).insertMany([
    { appId: 'hr', modelID: 'a' },
    { appId: 'sales', modelID: 'b' },
    { appId: 'hr', modelID: 'c' },
  ])
  const { url } = await startService(t, 'engine', { store })
  const body = (await (await fetch(`${url}/liveness`)).json()) as { appList: string }
  t.equal(body.appList, '["hr","sales"]')
})

t.test('a store failure is reported in appList, not thrown', async (t) => {
  const failing = {
    collection: () => ({
      aggregate: () => ({
        toArray: async () => {
          throw new Error('connection refused')
        },
      }),
    }),
  } as unknown as Store
  t.equal(await describeApps(failing), 'Cannot read apps: connection refused')
})
