import { setImmediate as nextTurn } from 'node:timers/promises'
import t from 'tap'
import type { StoredWebhookDelivery, StoredWebhookSubscription } from '../../../../store/collections.js'
import { Collections } from '../../../../store/collections.js'
import type { Store } from '../../../../store/port.js'
import { testClock } from '../../../testing/clock.js'
import { openTestStore, silentLogger } from '../../../testing/harness.js'
import { retryWaits } from '../../../testing/retries.js'
import { deliveryRepository } from './repository.js'
import type { TryResult } from './sender.js'
import { DeliveryWorker, type DeliveryWorkerSettings } from './worker.js'

const T0 = new Date('2025-07-01T10:00:00.000Z')
const SETTINGS: DeliveryWorkerSettings = {
  backoffMs: 100,
  timeoutMs: 1_000,
  pollMs: 10,
  leaseMs: 1_000,
  concurrency: 4,
  retentionMs: 3_600_000,
}
const SUBSCRIPTION: StoredWebhookSubscription = {
  _id: 'sub-1',
  organizationId: 'acme',
  appId: 'hr',
  url: 'http://127.0.0.1:1/hooks',
  events: ['Created'],
  processIds: [],
  secret: 's'.repeat(32),
  createdAt: T0,
}

function delivery(id: string, processInstanceId: string, sequence: number, at: Date = T0): StoredWebhookDelivery {
  return {
    _id: id,
    subscriptionId: SUBSCRIPTION._id,
    organizationId: 'acme',
    appId: 'hr',
    processId: 'leave-request',
    processInstanceId,
    eventType: 'Updated',
    orderKey: `${SUBSCRIPTION._id} ${processInstanceId}`,
    sequence,
    body: JSON.stringify({ deliveryId: id }),
    status: 'pending',
    tries: 0,
    dueAt: at,
    createdAt: at,
  }
}

function worker(
  store: Store,
  send: (delivery: StoredWebhookDelivery) => TryResult | Promise<TryResult>,
  now: () => Date,
  owner = 'engine-a',
): DeliveryWorker {
  return new DeliveryWorker({
    deliveries: deliveryRepository(store),
    subscriptions: { find: async (id) => (id === SUBSCRIPTION._id ? SUBSCRIPTION : null) },
    sender: { send: async (_subscription, stored) => send(stored) },
    settings: SETTINGS,
    owner,
    log: silentLogger,
    now,
  })
}

async function stored(store: Store, id: string): Promise<StoredWebhookDelivery> {
  const found = await store.collection<StoredWebhookDelivery>(Collections.webhookDeliveries).findOne({ _id: id })
  if (!found) throw new Error(`delivery ${id} is gone`)
  return found
}

t.test('a failing delivery is retried after WEBHOOK_BACKOFF_MS × 2^(tries−1) and marked failed at its tenth failed try', async (t) => {
  const store = await openTestStore(t)
  await store.collection(Collections.webhookDeliveries).insertOne({ ...delivery('d-1', 'pi-1', 1) })
  const clock = testClock(T0)
  let tries = 0
  const failing = worker(
    store,
    () => ({ delivered: false, statusCode: 500 + (tries++ % 3), error: `the receiver answered ${500 + ((tries - 1) % 3)}` }),
    clock.now,
  )
  const waits = await retryWaits(t, failing, clock, 10, async (attempt) => {
    const after = await stored(store, 'd-1')
    t.match(after, { status: 'pending', tries: attempt })
    return after.dueAt
  })
  t.same(waits, [100, 200, 400, 800, 1600, 3200, 6400, 12800, 25600], 'each wait doubles the previous one')
  t.equal(await failing.runDue(), 1, 'the tenth try is made')
  t.match(await stored(store, 'd-1'), { status: 'failed', tries: 10, lastStatusCode: 500, lastError: 'the receiver answered 500' })
  clock.advance(3_600_000)
  t.equal(await failing.runDue(), 0, 'a failed delivery is never tried again by itself')
})

t.test("an instance's deliveries to a subscription go out one after another in the order of its versions, others alongside", async (t) => {
  const store = await openTestStore(t)
  const clock = testClock(T0)
  // Inserted out of order, all due: the order comes from the versions, not from the insert or due times.
  await store
    .collection(Collections.webhookDeliveries)
    .insertMany([
      { ...delivery('a-3', 'pi-a', 3) },
      { ...delivery('a-1', 'pi-a', 1, new Date(T0.getTime() + 5)) },
      { ...delivery('b-1', 'pi-b', 1) },
      { ...delivery('a-2', 'pi-a', 2) },
    ])
  const sent: string[] = []
  let failA1 = true
  const receiving = worker(
    store,
    (stored) => {
      sent.push(stored._id)
      if (stored._id === 'a-1' && failA1) {
        failA1 = false
        return { delivered: false, statusCode: 503, error: 'the receiver answered 503' }
      }
      return { delivered: true, statusCode: 200 }
    },
    clock.now,
  )
  clock.advance(5)
  await receiving.runDue()
  t.same(sent, ['b-1', 'a-1'], 'pi-b goes out; pi-a starts with its first event, which fails')
  t.match(await stored(store, 'a-2'), { status: 'pending', tries: 0 }, 'the later events of pi-a wait behind the failed one')
  clock.advance(SETTINGS.backoffMs)
  await receiving.runDue()
  t.same(sent, ['b-1', 'a-1', 'a-1', 'a-2', 'a-3'], 'once it is delivered, the rest follow in order')
})

t.test('two engines on one store never try the same delivery at once, and between them deliver every one once', async (t) => {
  const store = await openTestStore(t)
  const deliveries = Array.from({ length: 30 }, (_, n) => delivery(`d-${n}`, `pi-${n % 10}`, Math.floor(n / 10) + 1))
  await store.collection(Collections.webhookDeliveries).insertMany(deliveries.map((entry) => ({ ...entry })))
  const received = new Map<string, number>()
  const order = new Map<string, number[]>()
  const send = async (stored: StoredWebhookDelivery): Promise<TryResult> => {
    received.set(stored._id, (received.get(stored._id) ?? 0) + 1)
    order.set(stored.processInstanceId, [...(order.get(stored.processInstanceId) ?? []), stored.sequence])
    // A try that is not over at once: the other engine's claims come in between.
    await nextTurn()
    return { delivered: true, statusCode: 200 }
  }
  const now = () => new Date(T0.getTime() + 1_000)
  await Promise.all([worker(store, send, now, 'engine-a').runDue(), worker(store, send, now, 'engine-b').runDue()])
  t.equal(received.size, 30, 'every delivery was sent')
  t.ok(
    [...received.values()].every((count) => count === 1),
    'each exactly once',
  )
  t.ok(
    [...order.values()].every((sequence) => sequence.join() === '1,2,3'),
    'each instance in order',
  )
})

t.test('a try whose engine stopped is made again once its claim lapses; a deleted subscription fails its deliveries', async (t) => {
  const store = await openTestStore(t)
  const clock = testClock(T0)
  const deliveries = deliveryRepository(store)
  await store
    .collection(Collections.webhookDeliveries)
    .insertMany([{ ...delivery('d-1', 'pi-1', 1) }, { ...delivery('orphan', 'pi-2', 1), subscriptionId: 'deleted' }])
  const claimed = await deliveries.claim(await stored(store, 'd-1'), 'engine-that-died', clock.now(), new Date(T0.getTime() + 2_000))
  t.ok(claimed, 'claimed by an engine that then died')
  const sent: string[] = []
  const survivor = worker(
    store,
    (entry) => {
      sent.push(entry._id)
      return { delivered: true, statusCode: 200 }
    },
    clock.now,
  )
  await survivor.runDue()
  t.same(sent, [], 'not while the claim holds')
  t.match(await stored(store, 'orphan'), { status: 'failed', lastError: 'the subscription was deleted' })
  clock.advance(2_001)
  await survivor.runDue()
  t.same(sent, ['d-1'])
  t.match(await stored(store, 'd-1'), { status: 'delivered', tries: 1, lastStatusCode: 200 })
  t.equal(
    await deliveries.record(claimed!, 'engine-that-died', { status: 'failed', error: 'late' }, clock.now()),
    false,
    'the dead engine can no longer record an outcome',
  )
})

t.test('settled deliveries are removed once past the retention window; pending ones are kept', async (t) => {
  const store = await openTestStore(t)
  const clock = testClock(T0)
  const old = new Date(T0.getTime() - 2 * 3_600_000)
  await store
    .collection(Collections.webhookDeliveries)
    .insertMany([
      { ...delivery('old-delivered', 'pi-1', 1, old), status: 'delivered' },
      { ...delivery('old-failed', 'pi-2', 1, old), status: 'failed' },
      { ...delivery('old-pending', 'pi-3', 1, old) },
      { ...delivery('recent-delivered', 'pi-4', 1), status: 'delivered' },
    ])
  t.equal(await worker(store, () => ({ delivered: true, statusCode: 200 }), clock.now).removeExpired(), 2)
  const left = await store
    .collection<StoredWebhookDelivery>(Collections.webhookDeliveries)
    .find({}, { sort: { _id: 1 } })
    .toArray()
  t.same(
    left.map((entry) => entry._id),
    ['old-pending', 'recent-delivered'],
  )
})
