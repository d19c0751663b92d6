/**
 * Idempotent starts through the gateway (docs/reference/consistency.md#idempotent-starts): the `idempotency-key` header on every start
 * route answers the first answer again (`idempotent-replayed: true`) and starts nothing more, also
 * for 20 concurrent duplicates; another body with the key is 422; a failed first request or a
 * lapsed claim does not block the retry; keys expire after IDEMPOTENCY_TTL_HOURS.
 */
import t from 'tap'
import type { ProcessStartResult, Session } from '../../openapi/generated/schemas.js'
import { CLAIM_LEASE_MS, idempotencyKeyId, requestHash } from '../../services/engine/lifecycle/idempotent-start.js'
import { testClock } from '../../services/testing/clock.js'
import { createTestUser } from '../../services/testing/users.js'
import { HR } from '../../services/testing/workflow.js'
import { Collections, type StoredContext, type StoredIdempotencyKey, type StoredUser } from '../../store/collections.js'
import { EmbeddedStore } from '../../store/embedded/store.js'
import { type ControlStack, startControlStack } from './stack.js'

const leave = { ...HR, processId: 'leave-request', input: { days: 3, reason: 'Family visit' } }

function instanceCount(stack: ControlStack): Promise<number> {
  return stack.store.collection<StoredContext>(Collections.contexts).countDocuments({})
}

/** `POST /process/start` carrying the idempotency key `key`, by the employee unless `as` says otherwise. */
function startWithKey(stack: ControlStack, key: string, body: object = leave, as: StoredUser = stack.users.employee) {
  return stack.send<ProcessStartResult>('startProcess', 'POST', '/process/start', { as, body, headers: { 'idempotency-key': key } })
}

const startRoutes = [
  { operationId: 'startProcess', path: '/process/start' },
  { operationId: 'startActionProcess', path: '/action/start' },
  { operationId: 'startExternalProcess', path: '/external/process/start' },
] as const

t.test('each start route answers a repeated key with the first answer, `idempotent-replayed: true`, and starts nothing more', async (t) => {
  const stack = await startControlStack(t)
  for (const { operationId, path } of startRoutes) {
    const key = `key-${operationId}`
    const first = await stack.send<ProcessStartResult>(operationId, 'POST', path, {
      as: stack.users.employee,
      body: leave,
      headers: { 'idempotency-key': key },
    })
    t.equal(first.status, 200, `${path} starts`)
    t.equal(first.headers.get('idempotent-replayed'), null, 'the first answer is no replay')
    const count = await instanceCount(stack)
    const again = await stack.send<ProcessStartResult>(operationId, 'POST', path, {
      as: stack.users.employee,
      body: leave,
      headers: { 'idempotency-key': key },
    })
    t.equal(again.status, 200)
    t.equal(again.headers.get('idempotent-replayed'), 'true', 'the gateway passes the replay header on')
    t.same(again.body, first.body, `${path} answers the first answer again`)
    t.equal(await instanceCount(stack), count, 'no second instance')
  }
  // /context: a start is idempotent; opening an instance ignores the key.
  const opened = await stack.send<Session>('openContext', 'POST', '/context', {
    as: stack.users.employee,
    body: leave,
    headers: { 'idempotency-key': 'ctx' },
  })
  const count = await instanceCount(stack)
  const replayed = await stack.send<Session>('openContext', 'POST', '/context', {
    as: stack.users.employee,
    body: leave,
    headers: { 'idempotency-key': 'ctx' },
  })
  t.equal(replayed.headers.get('idempotent-replayed'), 'true')
  t.same(replayed.body.data.context.processInstance.processInstanceId, opened.body.data.context.processInstance.processInstanceId)
  t.equal(await instanceCount(stack), count)
  const id = opened.body.data.context.processInstance.processInstanceId
  const display = await stack.send<Session>('openContext', 'POST', '/context', {
    as: stack.users.employee,
    body: { ...HR, processId: 'leave-request', processInstanceId: id },
    headers: { 'idempotency-key': 'ctx' },
  })
  t.equal(display.status, 200, 'opening an instance with a used key is no start: no 422')
  t.equal(display.headers.get('idempotent-replayed'), null)
  // Without the header every start starts.
  await stack.send('startProcess', 'POST', '/process/start', { as: stack.users.employee, body: leave })
  await stack.send('startProcess', 'POST', '/process/start', { as: stack.users.employee, body: leave })
  t.equal(await instanceCount(stack), count + 2)
})

t.test('20 concurrent duplicates start one instance and all get its answer', async (t) => {
  const stack = await startControlStack(t)
  const answers = await Promise.all(
    Array.from({ length: 20 }, () =>
      stack.send<Session>('openContext', 'POST', '/context', {
        as: stack.users.employee,
        body: leave,
        headers: { 'idempotency-key': 'burst' },
      }),
    ),
  )
  t.same(
    answers.map((answer) => answer.status),
    Array(20).fill(200),
  )
  const ids = new Set(answers.map((answer) => answer.body.data.context.processInstance.processInstanceId))
  t.equal(ids.size, 1, 'one instance id in every answer')
  t.equal(await instanceCount(stack), 1, 'one instance stored')
  t.equal(answers.filter((answer) => answer.headers.get('idempotent-replayed') === 'true').length, 19, 'nineteen replays')
})

t.test('the same key with another body is 422 wm3142 and starts nothing; keys are per tenant and at most 255 characters', async (t) => {
  const stack = await startControlStack(t)
  t.equal((await startWithKey(stack, 'k1')).status, 200)
  const other = await startWithKey(stack, 'k1', { ...leave, input: { days: 4 } })
  t.match(other, { status: 422, body: { status: 'customerror', error: { code: 'wm3142' } } })
  t.equal(await instanceCount(stack), 1)
  // The body's key order does not matter: the same body is the same request.
  const reordered = {
    input: { reason: 'Family visit', days: 3 },
    processId: 'leave-request',
    organizationId: HR.organizationId,
    appId: HR.appId,
  }
  t.equal((await startWithKey(stack, 'k1', reordered)).headers.get('idempotent-replayed'), 'true')

  // Another tenant's key of the same name is another key.
  await stack.store.collection(Collections.models).insertOne({
    ...(await stack.store.collection(Collections.models).findOne({ modelID: 'leave-request', live: true }, { projection: { _id: 0 } })),
    appId: 'sales',
    organizationId: 'acme',
  })
  const salesUser = await createTestUser(stack.store, {
    appId: 'sales',
    organizationId: 'acme',
    fullName: 'Sid Sales',
    swimlanes: ['employee'],
  })
  const sales = await startWithKey(stack, 'k1', { ...leave, appId: 'sales' }, salesUser)
  t.equal(sales.status, 200, 'another tenant starts with the same key')
  t.equal(sales.headers.get('idempotent-replayed'), null)
  t.equal(await instanceCount(stack), 2)

  t.equal((await startWithKey(stack, 'x'.repeat(256))).status, 400, '256 characters')
  t.equal((await startWithKey(stack, 'x'.repeat(255))).status, 200, '255 characters')
})

t.test("another user's repeat of a key starts their own instance and never gets the first caller's answer", async (t) => {
  const stack = await startControlStack(t)
  const first = await startWithKey(stack, 'shared-key')
  t.equal(first.status, 200)
  const mine = first.body.data.context.processInstance
  const process = await stack.send('getProcessStatus', 'GET', `/process/${mine.processInstanceId}?appId=hr`, { as: stack.users.outsider })
  t.equal(process.status, 403, "the outsider may not read the employee's instance")

  const colleagues = await startWithKey(stack, 'shared-key', leave, stack.users.colleague)
  t.equal(colleagues.status, 200, 'the colleague starts')
  t.equal(colleagues.headers.get('idempotent-replayed'), null, 'no replay of the employee answer')
  const theirs = colleagues.body.data.context.processInstance
  t.not(theirs.processInstanceId, mine.processInstanceId, 'their own instance')
  t.not(theirs.businessKey, mine.businessKey)
  t.equal(await instanceCount(stack), 2)
  t.equal(
    (await startWithKey(stack, 'shared-key', leave, stack.users.colleague)).headers.get('idempotent-replayed'),
    'true',
    'their key replays to them',
  )

  // The outsider, who may not even read the employee's instance, sends the key and body too.
  const outsider = await startWithKey(stack, 'shared-key', leave, stack.users.outsider)
  t.equal(outsider.headers.get('idempotent-replayed'), null)
  t.notMatch(JSON.stringify(outsider.body), mine.processInstanceId, "no trace of the employee's instance")
  t.notMatch(JSON.stringify(outsider.body), mine.businessKey)
})

t.test('a first request that failed, or whose claim lapsed, does not block the retry', async (t) => {
  const clock = testClock(new Date())
  const stack = await startControlStack(t, {}, { clock: clock.now })
  const body = { ...leave, initiatorUserId: 'later-user' }
  const failed = await startWithKey(stack, 'retry-me', body, stack.users.admin)
  t.match(failed, { status: 400, body: { error: { code: 'wm3006' } } }, 'the initiator does not exist yet')
  await createTestUser(stack.store, { ...HR, userId: 'later-user', fullName: 'Lou Later', swimlanes: ['employee'] })
  const retried = await startWithKey(stack, 'retry-me', body, stack.users.admin)
  t.equal(retried.status, 200, 'the retry runs')
  t.equal(retried.headers.get('idempotent-replayed'), null)
  t.equal(await instanceCount(stack), 1)

  // A claim left by a request whose engine died: lapsed, no answer. The retry takes it over and
  // starts the instance that claim named.
  const keys = stack.store.collection<StoredIdempotencyKey>(Collections.idempotencyKeys)
  const now = clock.now().getTime()
  const orphanId = idempotencyKeyId({ ...HR, userId: stack.users.employee.userId, route: '/process/start' }, 'orphan')
  await keys.insertOne({
    _id: orphanId,
    requestHash: requestHash('/process/start', leave),
    processInstanceId: 'claimed-instance-id',
    claimId: 'dead-claim',
    claimedUntil: new Date(now - 1),
    expiresAt: new Date(now + 3_600_000),
  })
  const takenOver = await startWithKey(stack, 'orphan')
  t.equal(takenOver.status, 200)
  t.equal(takenOver.body.data.context.processInstance.processInstanceId, 'claimed-instance-id', 'the instance the lapsed claim meant')
  t.equal((await keys.findOne({ _id: orphanId }))?.answer?.statusCode, 200, 'the answer is kept now')
  t.ok(CLAIM_LEASE_MS >= 60_000, 'a live claim lasts at least as long as the gateway waits')
})

t.test('keys expire after IDEMPOTENCY_TTL_HOURS: the store removes them and the key starts again', async (t) => {
  const clock = testClock(new Date())
  const stack = await startControlStack(t, { idempotencyTtlHours: 1 / 3600 }, { clock: clock.now })
  const first = await startWithKey(stack, 'short')
  const keys = stack.store.collection<StoredIdempotencyKey>(Collections.idempotencyKeys)
  const stored = await keys.findOne({})
  t.equal(stored?.expiresAt.getTime(), clock.now().getTime() + 1_000, 'kept for one second of the engine clock')
  clock.advance(1_000)
  const later = await startWithKey(stack, 'short')
  t.equal(later.headers.get('idempotent-replayed'), null, 'an expired key is not replayed')
  t.not(later.body.data.context.processInstance.processInstanceId, first.body.data.context.processInstance.processInstanceId)
  t.equal(await instanceCount(stack), 2)
  // The embedded store's TTL sweep removes keys past their expiry (MongoDB's TTL monitor does the same).
  t.ok(stack.store instanceof EmbeddedStore)
  if (stack.store instanceof EmbeddedStore) {
    t.equal(await stack.store.sweepExpired(clock.advance(2_000)), 1)
    t.equal(await keys.countDocuments({}), 0)
  }
})
