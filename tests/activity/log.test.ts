/**
 * An instance's activity through the gateway (docs/reference/instances.md#activities): a change keeps
 * its records in the instance's own document, the oldest beyond ACTIVITY_LOG_LENGTH move to
 * `activities`, and the activity routes list both, newest first, as do the records an earlier
 * release stored in `activities` alone.
 */
import t from 'tap'
import type { ActivityRecord, ContextAndActivity, Session } from '../../openapi/generated/schemas.js'
import { storedInstance } from '../../services/testing/instance-store.js'
import { HR, taskIds } from '../../services/testing/workflow.js'
import { ACTIVITY_LOG_LENGTH } from '../../store/activity-log.js'
import { Collections, type StoredActivity, type StoredContext } from '../../store/collections.js'
import { type ControlStack, startControlStack } from '../process-control/stack.js'

async function listed(stack: ControlStack, session: Session): Promise<ActivityRecord[]> {
  const { processInstanceId } = session.context.processInstance
  const answer = await stack.send<ActivityRecord[]>('listContextActivity', 'POST', '/context/activity', {
    as: stack.users.employee,
    body: { ...HR, processInstanceId },
  })
  if (answer.status !== 200) throw new Error(`/context/activity answered ${answer.status}`)
  return answer.body.data
}

async function queried(stack: ControlStack, session: Session): Promise<ActivityRecord[]> {
  const { processInstanceId, businessKey } = session.context.processInstance
  const answer = await stack.send<ContextAndActivity[]>(
    'queryProcessInstanceContextAndActivity',
    'POST',
    '/query/processInstanceContextAndActivity',
    { as: stack.users.admin, body: { ...HR, processId: 'leave-request', processInstances: [{ processInstanceId, businessKey }] } },
  )
  if (answer.status !== 200) throw new Error(`the query answered ${answer.status}`)
  return answer.body.data[0]?.activity ?? []
}

function collected(stack: ControlStack, processInstanceId: string): Promise<number> {
  return stack.store.collection(Collections.activities).countDocuments({ processInstanceId })
}

async function save(stack: ControlStack, session: Session, n: number): Promise<void> {
  const saved = await stack.send('saveAction', 'POST', '/action/save', {
    as: stack.users.employee,
    body: { ...HR, ...taskIds(session), dataInstance: { ...session.context.dataInstance, reason: `draft ${n}` } },
  })
  if (saved.status !== 200) throw new Error(`save ${n} answered ${saved.status}: ${JSON.stringify(saved.body)}`)
}

t.test("a lifecycle's records stay in the instance's document; the routes list them newest first", async (t) => {
  const stack = await startControlStack(t)
  const session = await stack.startCompletedLeave()
  const { processInstanceId } = session.context.processInstance
  const stored = await storedInstance(stack.store, processInstanceId)
  t.same(
    stored.activityLog?.map((entry) => entry.type),
    ['start', 'complete', 'complete'],
  )
  t.equal(await collected(stack, processInstanceId), 0, 'no record document of its own')
  const records = await listed(stack, session)
  t.same(
    records.map((record) => record.type),
    ['complete', 'complete', 'start'],
  )
  t.match(records[2], { processInstanceId, userId: stack.users.employee.userId, type: 'start' })
  t.match(records[1], { processInstanceId, userId: stack.users.employee.userId, stepId: 'request' })
  t.same(await queried(stack, session), records, 'the query lists the same')
  const read = await stack.send<Record<string, unknown>>('getProcessStatus', 'GET', `/process/${processInstanceId}`, {
    as: stack.users.admin,
  })
  t.notOk(JSON.stringify(read.body).includes('activityLog'), 'the log is not part of an answer about the instance')
})

t.test(`past ${ACTIVITY_LOG_LENGTH} records the oldest move to activities, and the listing still holds every one in order`, async (t) => {
  const stack = await startControlStack(t)
  const session = await stack.startLeave()
  const { processInstanceId } = session.context.processInstance
  const saves = ACTIVITY_LOG_LENGTH + 4
  for (let n = 0; n < saves; n++) await save(stack, session, n)

  const stored = await storedInstance(stack.store, processInstanceId)
  t.equal(stored.activityLog?.length, ACTIVITY_LOG_LENGTH, 'the document keeps the newest')
  const before = await listed(stack, session)
  t.equal(await collected(stack, processInstanceId), before.length - ACTIVITY_LOG_LENGTH, 'the others are in activities')
  t.same(before.at(-1)?.type, 'start', 'the oldest record, moved, lists last')
  t.equal(before.filter((record) => record.type === 'save').length, saves, 'every save is listed')
  const times = before.map((record) => record.timeStamp)
  t.same(times, [...times].sort().reverse(), 'newest first')
  t.same(await queried(stack, session), before, 'the query lists the same')
})

t.test('an instance an earlier release stored, its records all in activities, lists them with those of its next changes', async (t) => {
  const stack = await startControlStack(t)
  const session = await stack.startLeave()
  const { processInstanceId } = session.context.processInstance
  // What an earlier release stored: no log in the document, the start record in `activities`.
  const contexts = stack.store.collection<StoredContext>(Collections.contexts)
  const [start] = (await storedInstance(stack.store, processInstanceId)).activityLog ?? []
  await contexts.updateOne({ _id: processInstanceId }, { $unset: { activityLog: '' } })
  await stack.store.collection<StoredActivity>(Collections.activities).insertOne({ processInstanceId, ...start } as StoredActivity)
  t.same(
    (await listed(stack, session)).map((record) => record.type),
    ['start'],
  )

  await save(stack, session, 1)
  t.same(
    (await storedInstance(stack.store, processInstanceId)).activityLog?.map((entry) => entry.type),
    ['save'],
    'the next change starts a log',
  )
  t.same(
    (await listed(stack, session)).map((record) => record.type),
    ['save', 'start'],
  )
})
