import t, { type Test } from 'tap'
import type { StoredContext } from '../../store/collections.js'
import type { Envelope } from '../../services/testing/gateway.js'
import type { ProcessStatusSummary } from '../../openapi/generated/schemas.js'
import { startWaitStack, type WaitStack } from './support.js'

/** A parent that hands an order to the `check` child and takes its verdict. */
const PARENT = {
  input: { type: 'object' },
  start: 'check',
  steps: {
    check: { type: 'callProcess', processId: 'check', input: '{ "amount": data.amount }', as: 'data.verdict', next: 'done' },
    done: { type: 'end' },
  },
}

/** The child: a manager approves (or the `fail` function fails it); its end gives an output. */
const CHILD = {
  input: { type: 'object', properties: { amount: { type: 'number' } } },
  start: 'route',
  steps: {
    route: { type: 'switch', cases: [{ when: 'data.amount > 1000', next: 'explode' }], default: 'approve' },
    approve: {
      type: 'userTask',
      name: 'Approve the amount',
      swimlane: 'manager',
      actions: [{ actionType: 'complete', next: 'approved' }],
    },
    explode: { type: 'function', function: 'tooMuch', next: 'approved', onError: 'fail' },
    approved: { type: 'end', output: '{ "approved": true, "amount": data.amount }' },
  },
  swimlanes: { manager: { name: 'Managers' } },
  functions: { tooMuch: { steps: [{ fail: "'amount too large'" }] } },
}

/** Calls itself until nothing stops it: the depth limit does. */
const RECURSIVE = {
  start: 'again',
  steps: { again: { type: 'callProcess', processId: 'recursive', input: '{}', next: 'done' }, done: { type: 'end' } },
}

async function familyStack(t: Test): Promise<WaitStack> {
  const stack = await startWaitStack(t)
  await stack.deploy('check', CHILD)
  await stack.deploy('parent', PARENT)
  await stack.deploy('lenient', { ...PARENT, steps: { ...PARENT.steps, check: { ...PARENT.steps.check, onChildFailure: 'continue' } } })
  await stack.deploy('recursive', RECURSIVE)
  return stack
}

const childOf = async (stack: WaitStack, parentId: string, index = 0): Promise<StoredContext> => {
  const parent = await stack.until(
    async () => {
      const childId = (await stack.context(parentId)).processInstance.childInstances?.[index]?.processInstanceId
      return childId === undefined ? null : stack.store.collection<StoredContext>('contexts').findOne({ _id: childId })
    },
    (child) => child !== null,
  )
  if (!parent) throw new Error(`instance ${parentId} started no child ${index}`)
  return parent
}

async function completeOpenTask(t: Test, stack: WaitStack, instance: StoredContext): Promise<void> {
  const task = instance.processInstance.tasks.find((candidate) => candidate.status === 'open')!
  const answer = await stack.client.call('runExternalTaskAction', 'POST', `/external/task/${task.taskId}/action/complete`, {
    user: stack.users.manager.userId,
    body: { appId: 'hr', organizationId: 'acme', processInstanceId: instance._id, dataInstance: instance.dataInstance },
  })
  t.equal(answer.status, 200, JSON.stringify(answer.body))
}

t.test("a callProcess step starts its child with the parent's initiator, waits, and takes the child's output at `as`", async (t) => {
  const stack = await familyStack(t)
  const parentId = await stack.start('parent', { amount: 50 })
  const child = await childOf(stack, parentId)
  t.match(child.processInstance, {
    processId: 'check',
    initiator: stack.users.employee.userId,
    parentInstance: { processInstanceId: parentId, processId: 'parent', depth: 1 },
  })
  t.same(child.dataInstance, { amount: 50 }, "the child's data is what `input` gave")
  const status = await stack.client.call<Envelope<ProcessStatusSummary>>('getProcessStatus', 'GET', `/process/${parentId}`, {
    user: stack.users.employee.userId,
  })
  t.match(status.body.data, {
    processStatus: 'running',
    childInstances: [{ processInstanceId: child._id, processId: 'check', stepId: 'check', processStatus: 'running' }],
  })
  const childStatus = await stack.client.call<Envelope<ProcessStatusSummary>>('getProcessStatus', 'GET', `/process/${child._id}`, {
    user: stack.users.employee.userId,
  })
  t.match(childStatus.body.data, { parentInstance: { processInstanceId: parentId } })

  await completeOpenTask(t, stack, child)
  const parent = await stack.until(
    () => stack.context(parentId),
    (stored) => stored.processStatus === 'completed',
  )
  t.equal(parent.processStatus, 'completed')
  t.same(parent.dataInstance.verdict, { approved: true, amount: 50 }, "the child's end output")
  t.match(await stack.activities(parentId, 'childReturned'), [{ details: { childInstanceId: child._id, status: 'completed' } }])
  t.equal((await stack.jobs('childEnded', parentId)).length, 1, 'one childEnded job')
})

t.test("a child's failure fails the parent's thread (retry starts a new child); onChildFailure continue goes on", async (t) => {
  const stack = await familyStack(t)
  const parentId = await stack.start('parent', { amount: 5000 })
  const failedChild = await childOf(stack, parentId)
  t.equal(failedChild.processStatus, 'failed')
  const parent = await stack.until(
    () => stack.context(parentId),
    (stored) => stored.processStatus === 'failed',
  )
  t.match(parent.processInstance.threads, [
    { status: 'failed', stepId: 'check', error: { code: 'childFailed', message: /amount too large/ } },
  ])

  const retried = await stack.client.call('retryAction', 'POST', '/action/retry', {
    user: stack.users.admin.userId,
    body: {
      appId: 'hr',
      organizationId: 'acme',
      processId: 'parent',
      processInstanceId: parentId,
      businessKey: parent.businessKey,
      threadId: parent.processInstance.threads[0]!.threadId,
    },
  })
  t.equal(retried.status, 200, JSON.stringify(retried.body))
  const second = await childOf(stack, parentId, 1)
  t.not(second._id, failedChild._id, 'the retry started a new child')

  const lenientId = await stack.start('lenient', { amount: 5000 })
  const lenient = await stack.until(
    () => stack.context(lenientId),
    (stored) => stored.processStatus === 'completed',
  )
  t.equal(lenient.processStatus, 'completed', 'continue: the parent went on')
  t.equal(lenient.dataInstance.verdict, undefined, 'and nothing landed at `as`')
})

t.test('cancelling the parent cancels its running child', async (t) => {
  const stack = await familyStack(t)
  const parentId = await stack.start('parent', { amount: 10 })
  const child = await childOf(stack, parentId)
  const cancel = await stack.client.call('cancelProcess', 'POST', `/process/${parentId}/cancel`, {
    user: stack.users.employee.userId,
    body: {},
  })
  t.equal(cancel.status, 200)
  const cancelled = await stack.until(
    () => stack.context(child._id),
    (stored) => stored.processStatus === 'cancelled',
  )
  t.equal(cancelled.processStatus, 'cancelled')
  t.match(await stack.activities(child._id, 'cancelled'), [{ details: { reason: new RegExp(parentId) } }])
  t.equal((await stack.context(parentId)).processStatus, 'cancelled', 'the cancelled child does not change its cancelled parent')
})

t.test('instances nest at most 10 deep: the 11th callProcess fails with a clear error', async (t) => {
  const stack = await familyStack(t)
  const rootId = await stack.start('recursive')
  let id = rootId
  for (let depth = 1; depth <= 10; depth++) id = (await childOf(stack, id))._id
  const deepest = await stack.context(id)
  t.equal(deepest.processInstance.parentInstance?.depth, 10)
  t.match(deepest.processInstance.threads, [{ status: 'failed', error: { code: 'callDepth', message: /at most 10 may nest/ } }])
  t.same(deepest.processInstance.childInstances ?? [], [], 'no eleventh instance')
  const parentOfDeepest = await stack.until(
    () => stack.context(deepest.processInstance.parentInstance!.processInstanceId),
    (stored) => stored.processStatus === 'failed',
  )
  t.match(parentOfDeepest.processInstance.threads, [{ status: 'failed', error: { code: 'childFailed' } }], 'the failure reaches its parent')
})

t.test('a child that cannot start fails the parent thread', async (t) => {
  const stack = await familyStack(t)
  await stack.deploy('orphan', { ...PARENT, steps: { ...PARENT.steps, check: { ...PARENT.steps.check, processId: 'nowhere' } } })
  const id = await stack.start('orphan', { amount: 1 })
  const stored = await stack.until(
    () => stack.context(id),
    (context) => context.processStatus === 'failed',
  )
  t.match(stored.processInstance.threads, [{ status: 'failed', error: { message: /could not start: wm3002/ } }])
})
