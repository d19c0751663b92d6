import t from 'tap'
import { tenantShare, WorkerScheduler } from './pool.js'

/** Asks for a worker for each run and answers the order in which they were granted. */
function granting(scheduler: WorkerScheduler) {
  const granted: string[] = []
  const ask = (tenant: string, run: string): void => scheduler.acquire(tenant, () => granted.push(run))
  return { granted, ask }
}

t.test("another tenant's run starts before the queued runs of a tenant flooding the pool", async (t) => {
  const scheduler = new WorkerScheduler(2, 1)
  const { granted, ask } = granting(scheduler)
  for (const run of ['flood-1', 'flood-2', 'flood-3', 'flood-4']) ask('flooder', run)
  t.same(granted, ['flood-1'], 'the flooding tenant holds its share, one worker, and its other runs wait')
  ask('other', 'other-1')
  t.same(granted, ['flood-1', 'other-1'], "the other tenant's run takes the free worker at once")
  ask('other', 'other-2')
  ask('third', 'third-1')
  scheduler.release('flooder')
  scheduler.release('other')
  t.same(granted.slice(2), ['flood-2', 'other-2'], 'freed workers go round robin among the waiting tenants, in the order they came')
  scheduler.release('flooder')
  t.same(granted.slice(4), ['third-1'], "the flooder's freed worker goes to the third tenant, waiting behind it")
})

t.test('a run that gives up its place in the queue is never started', async (t) => {
  const scheduler = new WorkerScheduler(1, 1)
  const { granted, ask } = granting(scheduler)
  ask('a', 'a-1')
  const gaveUp = (): void => {
    granted.push('b-1')
  }
  scheduler.acquire('b', gaveUp)
  t.equal(scheduler.withdraw('b', gaveUp), true)
  ask('c', 'c-1')
  scheduler.release('a')
  t.same(granted, ['a-1', 'c-1'])
  t.equal(
    scheduler.withdraw('c', () => undefined),
    false,
    'a granted run has no place left to give up',
  )
})

t.test("a tenant's share is half the workers and half the cores, at least one", async (t) => {
  t.equal(tenantShare(4, 8), 2)
  t.equal(tenantShare(4, 2), 1, 'two spinning workers of one tenant would take both cores')
  t.equal(tenantShare(1, 8), 1)
  t.equal(tenantShare(16, 16), 8)
})
