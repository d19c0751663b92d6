import t from 'tap'
import { openTestStore, startService } from '../../testing/harness.js'

t.test('engine liveness answers status ok, its name and the time, and names no app or job', async (t) => {
  const store = await openTestStore(t)
  await store.collection('models').insertMany([
    { appId: 'hr', organizationId: 'acme', modelID: 'a' },
    { appId: 'secret-app', organizationId: 'globex', modelID: 'b' },
  ])
  const { url } = await startService(t, 'engine', { store })
  const response = await fetch(`${url}/liveness`)
  t.equal(response.status, 200)
  const text = await response.text()
  const body = JSON.parse(text) as Record<string, unknown>
  t.same(Object.keys(body).sort(), ['name', 'status', 'time'])
  t.equal(body.status, 'ok')
  t.equal(body.name, 'workflow-engine')
  t.ok(!Number.isNaN(Date.parse(body.time as string)), 'time is a date-time')
  t.notMatch(text, /secret-app|globex|hr/, 'no app or organization id')
})
