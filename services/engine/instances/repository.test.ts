import t from 'tap'
import { Collections } from '../../../store/collections.js'
import { openTestStore } from '../../testing/harness.js'
import { sampleState } from '../../testing/instances.js'
import { contextRepository } from './repository.js'

t.test('an inserted instance is stored at version 1 with top-level copies of its query fields', async (t) => {
  const store = await openTestStore(t)
  const contexts = contextRepository(store)
  await contexts.ensureIndexes()
  await contexts.insert(sampleState({ lastUpdate: '2025-06-30T09:00:00.000Z' }))
  const stored = await store.collection(Collections.contexts).findOne({ _id: 'pi-1' })
  t.match(stored, {
    _id: 'pi-1',
    version: 1,
    appId: 'hr',
    organizationId: 'acme',
    processId: 'leave-request',
    businessKey: 'LR-1',
    processStatus: 'running',
    initiator: 'alice',
    lastUpdate: new Date('2025-06-30T09:00:00.000Z'),
    dataInstance: { days: 3 },
  })
  const acme = { organizationId: 'acme', appId: 'hr' }
  t.same(await contexts.findByBusinessKey(acme, 'leave-request', 'LR-1').then((found) => found?._id), 'pi-1')
  t.equal(await contexts.findByBusinessKey({ ...acme, appId: 'sales' }, 'leave-request', 'LR-1'), null, 'within one app only')
  t.equal(
    await contexts.findByBusinessKey({ ...acme, organizationId: 'other' }, 'leave-request', 'LR-1'),
    null,
    'within one organization only',
  )
})

t.test(
  "a business key names the tenant's own instance: another organization's newer one under the same app id does not hide it",
  async (t) => {
    const contexts = contextRepository(await openTestStore(t))
    await contexts.ensureIndexes()
    await contexts.insert(sampleState({ lastUpdate: '2025-06-30T09:00:00.000Z' }))
    await contexts.insert(sampleState({ processInstanceId: 'pi-other', organizationId: 'other', lastUpdate: '2025-07-01T09:00:00.000Z' }))
    const found = await contexts.findByBusinessKey({ organizationId: 'acme', appId: 'hr' }, 'leave-request', 'LR-1')
    t.equal(found?._id, 'pi-1')
    const theirs = await contexts.findByBusinessKey({ organizationId: 'other', appId: 'hr' }, 'leave-request', 'LR-1')
    t.equal(theirs?._id, 'pi-other')
  },
)

t.test('a write from a stale version is refused and changes nothing', async (t) => {
  const contexts = contextRepository(await openTestStore(t))
  const first = await contexts.insert(sampleState())
  const second = await contexts.compareAndSet(first, sampleState({ processStatus: 'completed' }, { days: 4 }))
  t.match(second, { version: 2, processStatus: 'completed', dataInstance: { days: 4 } })
  t.equal(await contexts.compareAndSet(first, sampleState({}, { days: 5 })), null, 'version 1 is gone')
  t.match(await contexts.find('pi-1'), { version: 2, dataInstance: { days: 4 }, processStatus: 'completed' })
})

t.test('of concurrent writes from the same version exactly one wins and its update is the one kept', async (t) => {
  const contexts = contextRepository(await openTestStore(t))
  const base = await contexts.insert(sampleState())
  const results = await Promise.all([1, 2, 3, 4].map((days) => contexts.compareAndSet(base, sampleState({}, { days }))))
  const winners = results.filter((result) => result !== null)
  t.equal(winners.length, 1)
  t.same((await contexts.find('pi-1'))?.dataInstance, winners[0]?.dataInstance)
  t.equal((await contexts.find('pi-1'))?.version, 2)
})
