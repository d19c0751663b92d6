/**
 * Process instance ids are time-ordered UUIDs (version 7, lib/instance-id.ts), so every store adds
 * a new instance at one end of the indexes keyed by it; what models make with `$uuid()` stays random.
 */
import t from 'tap'
import type { ProcessStartResult } from '../../openapi/generated/schemas.js'
import { HR } from '../../services/testing/workflow.js'
import { startControlStack } from './stack.js'

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

t.test('instances started one after another get UUIDv7 ids in start order, with or without an idempotency key', async (t) => {
  const stack = await startControlStack(t)
  const ids: string[] = []
  const businessKeys: string[] = []
  for (const key of [undefined, 'first', undefined, 'second', undefined]) {
    const answer = await stack.send<ProcessStartResult>('startProcess', 'POST', '/process/start', {
      as: stack.users.employee,
      body: { ...HR, processId: 'leave-request', input: { days: 2 } },
      ...(key ? { headers: { 'idempotency-key': key } } : {}),
    })
    t.equal(answer.status, 200)
    ids.push(answer.body.data.context.processInstance.processInstanceId)
    businessKeys.push(answer.body.data.context.processInstance.businessKey)
  }
  for (const id of ids) t.match(id, UUID_V7, `${id} is a UUIDv7`)
  t.same(
    [...ids].sort((a, b) => (a < b ? -1 : 1)),
    ids,
    'sorted as strings, the ids are in the order the instances started',
  )
  t.equal(new Set(ids).size, ids.length, 'no id repeats')
  // The leave request's key is `'LR-' & $substring($uuid(), 0, 8)`: time-ordered, those eight
  // characters would be the same for every instance started within a minute.
  t.equal(new Set(businessKeys).size, businessKeys.length, 'business keys cut from $uuid() stay distinct')
})
