import t from 'tap'
import type { ProcessState, RuntimeEffect, Thread } from '../../../runtime/types.js'
import { childJobWrites } from './call-process.js'
import { timerJobWrites } from './timers.js'

const now = new Date('2026-03-02T08:30:00.000Z')

function state(threads: Thread[], extra: Partial<ProcessState['processInstance']> = {}): ProcessState {
  return {
    dataInstance: {},
    processInstance: {
      processInstanceId: 'pi-1',
      processId: 'p',
      processName: 'p',
      businessKey: 'k',
      appId: 'hr',
      organizationId: 'acme',
      modelVersion: 1,
      processStatus: 'running',
      initiator: 'emma',
      processStart: now.toISOString(),
      lastUpdate: now.toISOString(),
      tasks: [],
      notes: [],
      files: [],
      contributorUsers: [],
      threads,
      ...extra,
    },
  }
}

const timerThread: Thread = {
  threadId: 'th-1',
  stepId: 'wait',
  status: 'waiting',
  timer: { timerId: 'tm-1', dueAt: '2026-03-02T09:30:00.000Z' },
}

t.test('timer jobs: inserted when a thread starts waiting, removed when the wait ends, brought forward on resume', async (t) => {
  const started = timerJobWrites({ state: state([timerThread]), now })
  t.match(started, [
    {
      kind: 'insertOne',
      doc: { kind: 'timer', scheduleKey: 'timer:tm-1', dueAt: new Date(timerThread.timer!.dueAt), payload: { timerId: 'tm-1' } },
    },
  ])
  t.same(timerJobWrites({ previous: state([timerThread]), state: state([timerThread]), now }), [], 'an unchanged wait writes nothing')
  const cancelled = state([{ ...timerThread, status: 'done' }], { processStatus: 'cancelled' })
  t.match(timerJobWrites({ previous: state([timerThread]), state: cancelled, now }), [
    { kind: 'deleteMany', filter: { scheduleKey: 'timer:tm-1', status: { $in: ['waiting', 'retrying'] } } },
  ])
  const suspended = state([timerThread], { processStatus: 'suspended', suspendedFrom: 'running' })
  t.match(timerJobWrites({ previous: suspended, state: state([timerThread]), now }), [
    { kind: 'updateMany', filter: { kind: 'timer', 'payload.processInstanceId': 'pi-1' }, update: { $set: { dueAt: now } } },
  ])
})

t.test(
  'child jobs: a start per child asked for, the parent told when a child ends, children cancelled when no longer waited for',
  async (t) => {
    const waiting: Thread = { threadId: 'th-1', stepId: 'call', status: 'waiting', child: { processInstanceId: 'child-1', processId: 'c' } }
    const requested: RuntimeEffect[] = [
      {
        kind: 'childRequested',
        threadId: 'th-1',
        stepId: 'call',
        child: { processInstanceId: 'child-1', processId: 'c', input: {}, depth: 1 },
      },
    ]
    t.match(childJobWrites({ state: state([waiting]), effects: requested, now }), [
      { doc: { kind: 'startChild', payload: { childInstanceId: 'child-1' } } },
    ])
    const cancelled = state([{ ...waiting, status: 'done' }], { processStatus: 'cancelled' })
    t.match(childJobWrites({ previous: state([waiting]), state: cancelled, effects: [], now }), [{ doc: { kind: 'cancelChild' } }])
    const returned: RuntimeEffect[] = [
      { kind: 'childReturned', threadId: 'th-1', stepId: 'call', child: { processInstanceId: 'child-1', status: 'completed' } },
    ]
    t.same(
      childJobWrites({
        previous: state([waiting]),
        state: state([{ ...waiting, status: 'done' }], { processStatus: 'completed' }),
        effects: returned,
        now,
      }),
      [],
      'a child that returned is not cancelled',
    )

    const parent = { processInstanceId: 'parent-1', processId: 'p', threadId: 'th-p', depth: 1 }
    const running = state([{ threadId: 't', stepId: 's', status: 'waiting' }], { parentInstance: parent })
    const failed = state([{ threadId: 't', stepId: 's', status: 'failed' }], { parentInstance: parent, processStatus: 'failed' })
    t.match(childJobWrites({ previous: running, state: failed, effects: [], now }), [
      { doc: { kind: 'childEnded', payload: { processInstanceId: 'parent-1', threadId: 'th-p', childInstanceId: 'pi-1' } } },
    ])
    t.same(childJobWrites({ previous: failed, state: failed, effects: [], now }), [], 'told once per end')
  },
)
