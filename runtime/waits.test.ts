import t from 'tap'
import { compileProcess } from './compile.js'
import { fakeEnvironment, refusal, user } from './test-support.js'
import type { ProcessModelBody, ProcessState, Thread, WorkflowModel } from './types.js'
import { MAX_CALL_DEPTH } from './waits.js'

const employee = user('emma', ['employee'], 'Emma Employee')

function model(body: ProcessModelBody): WorkflowModel<ProcessModelBody> {
  return {
    modelID: 'waits',
    type: 'process',
    appId: 'hr',
    organizationId: 'acme',
    version: 1,
    updateDate: '2026-01-01T00:00:00.000Z',
    modelBody: body,
  }
}

const waits = compileProcess(
  model({
    processId: 'waits',
    businessKey: "'BK-' & input.order",
    start: 'route',
    steps: {
      route: {
        type: 'switch',
        cases: [
          { when: "data.kind = 'timer'", next: 'pause' },
          { when: "data.kind = 'until'", next: 'pauseUntil' },
          { when: "data.kind = 'receive'", next: 'payment' },
          { when: "data.kind = 'call'", next: 'call' },
        ],
        default: 'done',
      },
      pause: { type: 'timer', duration: 'PT1H', next: 'afterTimer' },
      pauseUntil: { type: 'timer', until: 'data.wakeAt', next: 'done' },
      afterTimer: { type: 'function', function: 'mark', next: 'done' },
      payment: {
        type: 'receive',
        message: 'paid',
        correlate: "'order-' & data.order",
        as: 'data.payment',
        next: 'done',
        timeout: { after: 'P2D', next: 'late' },
      },
      call: { type: 'callProcess', processId: 'child', input: '{ "order": data.order }', as: 'data.child', next: 'done' },
      late: { type: 'end', status: 'cancelled' },
      done: { type: 'end', output: '{ "order": data.order, "paid": data.payment.amount }' },
    },
    functions: {
      mark: {
        steps: [{ if: 'data.failAfterTimer', then: [{ fail: "'the step after the timer failed'" }] }, { set: { 'data.marked': 'true' } }],
      },
    },
  }),
)

async function start(input: Record<string, unknown>, parent?: { depth: number }) {
  const env = fakeEnvironment(employee)
  const started = await waits.start(
    {
      input: { order: 7, ...input },
      processInstanceId: 'pi-1',
      appId: 'hr',
      organizationId: 'acme',
      initiator: employee,
      ...(parent ? { parent: { processInstanceId: 'parent-1', processId: 'waits', threadId: 'th-p', depth: parent.depth } } : {}),
    },
    env,
  )
  return { env, state: started.state, effects: started.effects }
}

function thread(state: ProcessState): Thread {
  return state.processInstance.threads[0] as Thread
}

t.test('a timer step waits until its duration is over, then fires once', async (t) => {
  const { env, state } = await start({ kind: 'timer' })
  const waiting = thread(state)
  t.match(waiting, { stepId: 'pause', status: 'waiting', timer: { dueAt: '2026-03-01T10:00:00.000Z' } })
  const fired = await waits.fireTimer(state, waiting.threadId, waiting.timer!.timerId, env)
  t.equal(fired.state.processInstance.processStatus, 'completed')
  t.equal(fired.state.dataInstance.marked, true, 'the step after the timer ran')
  t.match(fired.effects, [{ kind: 'timerFired', stepId: 'pause', timerId: waiting.timer!.timerId }, { kind: 'processEnded' }])
  t.equal(thread(fired.state).timer, undefined, 'the thread no longer waits')
  const again = await refusal(waits.fireTimer(fired.state, waiting.threadId, waiting.timer!.timerId, env))
  t.equal(again.kind, 'conflict', 'a timer that fired does not fire again')
  const other = await refusal(waits.fireTimer(state, waiting.threadId, 'another-timer', env))
  t.equal(other.kind, 'conflict', 'only the timer the thread waits for fires')
})

t.test('a timer with until waits for the date the expression gives; a non-date is a technical error', async (t) => {
  const { state } = await start({ kind: 'until', wakeAt: '2026-04-01T00:00:00Z' })
  t.equal(thread(state).timer?.dueAt, '2026-04-01T00:00:00.000Z')
  const refused = await refusal(start({ kind: 'until', wakeAt: 'soon' }))
  t.match(refused, { kind: 'technical', message: /steps\.pauseUntil\.until must give a date-time/ })
})

t.test('when the step after a timer fails, the thread fails there and the timer counts as fired', async (t) => {
  const { env, state } = await start({ kind: 'timer', failAfterTimer: true })
  const fired = await waits.fireTimer(state, thread(state).threadId, thread(state).timer!.timerId, env)
  t.equal(fired.state.processInstance.processStatus, 'failed')
  t.match(thread(fired.state), { stepId: 'afterTimer', status: 'failed', error: { message: /the step after the timer failed/ } })
  t.equal(thread(fired.state).timer, undefined)
  t.match(fired.effects, [{ kind: 'timerFired' }, { kind: 'threadFailed' }])
})

t.test('a receive step waits with the correlation key it computed, merges the variables at `as` and times out', async (t) => {
  const { env, state } = await start({ kind: 'receive', payment: { currency: 'EUR' } })
  const waiting = thread(state)
  t.match(waiting, {
    status: 'waiting',
    message: { messageName: 'paid', correlationKey: 'order-7' },
    timer: { dueAt: '2026-03-03T09:00:00.000Z' },
  })
  const received = await waits.deliverMessage(state, waiting.threadId, waiting.message!.subscriptionId, { amount: 12 }, env)
  t.same(received.state.dataInstance.payment, { currency: 'EUR', amount: 12 }, 'merged with what was there')
  t.same(received.state.processInstance.output, { order: 7, paid: 12 }, "the end step's output")
  t.match(received.effects[0], { kind: 'messageReceived', messageName: 'paid', correlationKey: 'order-7' })
  const late = await refusal(waits.fireTimer(received.state, waiting.threadId, waiting.timer!.timerId, env))
  t.equal(late.kind, 'conflict', 'the timeout of a delivered message does not fire')
  const timedOut = await waits.fireTimer(state, waiting.threadId, waiting.timer!.timerId, env)
  t.equal(timedOut.state.processInstance.processStatus, 'cancelled', 'the timeout went to timeout.next')
  const noMessage = await refusal(waits.deliverMessage(timedOut.state, waiting.threadId, waiting.message!.subscriptionId, {}, env))
  t.equal(noMessage.kind, 'conflict')
})

t.test('the correlation key defaults to the businessKey', async (t) => {
  const body = model({
    start: 'wait',
    businessKey: "'K' & input.n",
    steps: { wait: { type: 'receive', message: 'm', next: 'end' }, end: { type: 'end' } },
  })
  const started = await compileProcess(body).start(
    { input: { n: 3 }, processInstanceId: 'pi-2', appId: 'hr', organizationId: 'acme', initiator: employee },
    fakeEnvironment(employee),
  )
  t.equal(thread(started.state).message?.correlationKey, 'K3')
})

t.test('a callProcess step asks for its child and takes its result, its failure or its cancellation', async (t) => {
  const { env, state, effects } = await start({ kind: 'call' })
  const waiting = thread(state)
  const childId = waiting.child!.processInstanceId
  t.match(effects, [
    { kind: 'childRequested', stepId: 'call', child: { processInstanceId: childId, processId: 'child', input: { order: 7 }, depth: 1 } },
  ])
  t.match(state.processInstance.childInstances, [{ processInstanceId: childId, processId: 'child', stepId: 'call' }])

  const completed = await waits.returnFromChild(
    state,
    waiting.threadId,
    { processInstanceId: childId, status: 'completed', result: { total: 3 } },
    env,
  )
  t.same(completed.state.dataInstance.child, { total: 3 })
  t.equal(completed.state.processInstance.processStatus, 'completed')

  const failed = await waits.returnFromChild(state, waiting.threadId, { processInstanceId: childId, status: 'failed', error: 'boom' }, env)
  t.match(thread(failed.state), { status: 'failed', stepId: 'call', error: { code: 'childFailed', message: /failed: boom/ } })
  t.equal(failed.state.processInstance.processStatus, 'failed')
  const retried = await waits.retry(failed.state, waiting.threadId, env)
  t.not(thread(retried.state).child?.processInstanceId, childId, 'a retry starts a new child')
  t.match(retried.effects, [{ kind: 'childRequested' }])

  const stranger = await refusal(
    waits.returnFromChild(state, waiting.threadId, { processInstanceId: 'someone-else', status: 'completed' }, env),
  )
  t.equal(stranger.kind, 'conflict', "another instance's end does not resume the thread")
})

t.test('onChildFailure continue goes on after a cancelled child', async (t) => {
  const body = model({
    start: 'call',
    steps: {
      call: { type: 'callProcess', processId: 'child', input: '{}', next: 'end', onChildFailure: 'continue' },
      end: { type: 'end' },
    },
  })
  const compiled = compileProcess(body)
  const env = fakeEnvironment(employee)
  const started = await compiled.start(
    { input: {}, processInstanceId: 'pi-3', appId: 'hr', organizationId: 'acme', initiator: employee },
    env,
  )
  const waiting = thread(started.state)
  const resumed = await compiled.returnFromChild(
    started.state,
    waiting.threadId,
    { processInstanceId: waiting.child!.processInstanceId, status: 'cancelled' },
    env,
  )
  t.equal(resumed.state.processInstance.processStatus, 'completed')
})

t.test(`instances nest at most ${MAX_CALL_DEPTH} deep: a deeper callProcess fails its thread`, async (t) => {
  const { state, effects } = await start({ kind: 'call' }, { depth: MAX_CALL_DEPTH })
  t.match(thread(state), { status: 'failed', error: { code: 'callDepth', message: /11 levels deep; at most 10/ } })
  t.notOk(
    effects.some((effect) => effect.kind === 'childRequested'),
    'no child is asked for',
  )
  t.equal(state.processInstance.parentInstance?.depth, MAX_CALL_DEPTH)
  const ok = await start({ kind: 'call' }, { depth: MAX_CALL_DEPTH - 1 })
  t.equal(thread(ok.state).status, 'waiting')
})
