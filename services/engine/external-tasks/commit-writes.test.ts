/** What a change writes to the externalTasks collection, with plain objects (commit-writes.ts). */
import t from 'tap'
import type { ChangeToStore } from '../instances/commit-hooks.js'
import type { ProcessState, RuntimeEffect, StepDefinition, Thread } from '../../../runtime/types.js'
import { externalTaskWrites } from './commit-writes.js'

function state(threads: Thread[], processStatus: ProcessState['processInstance']['processStatus'] = 'running'): ProcessState {
  return {
    processInstance: {
      processInstanceId: 'pi-1',
      processId: 'payroll',
      processName: 'Payroll',
      businessKey: 'PR-1',
      appId: 'hr',
      organizationId: 'acme',
      modelVersion: 1,
      processStatus,
      initiator: 'emma',
      processStart: '2026-03-01T09:00:00.000Z',
      lastUpdate: '2026-03-01T09:00:00.000Z',
      tasks: [],
      notes: [],
      files: [],
      contributorUsers: [],
      threads,
    },
    dataInstance: { days: 3 },
  }
}

const waiting = (externalTaskId: string): Thread => ({
  threadId: `t-${externalTaskId}`,
  stepId: 'export',
  status: 'waiting',
  externalTaskId,
})
const created = (externalTaskId: string): RuntimeEffect => ({
  kind: 'externalTaskCreated',
  externalTask: { externalTaskId, threadId: `t-${externalTaskId}`, stepId: 'export', topic: 'payroll', input: { days: 3 }, retries: 3 },
})

function change(fields: Partial<ChangeToStore>, onError: 'fail' | 'rollback' = 'fail'): ChangeToStore {
  const step = { type: 'externalTask', topic: 'payroll', next: 'done', onError } as StepDefinition
  return {
    state: state([]),
    effects: [],
    compiled: { step: () => step } as unknown as ChangeToStore['compiled'],
    env: {} as ChangeToStore['env'],
    event: 'Updated',
    version: 4,
    now: new Date('2026-03-02T08:30:00.000Z'),
    started: false,
    ...fields,
  }
}

t.test('a task the change creates is inserted with its tenant, instance and availability', async (t) => {
  const writes = externalTaskWrites(change({ state: state([waiting('x1')]), effects: [created('x1')] }))
  t.match(writes, [
    {
      kind: 'insertOne',
      doc: {
        _id: 'x1',
        organizationId: 'acme',
        appId: 'hr',
        processInstanceId: 'pi-1',
        businessKey: 'PR-1',
        suspended: false,
        instanceVersion: 4,
      },
    },
  ])
  t.notOk((writes[0] as { doc: Record<string, unknown> }).doc.rollbackState, 'no rollback state for onError "fail"')
})

t.test('with onError "rollback" the task keeps the state the change was computed from', async (t) => {
  const previous = state([{ threadId: 'main', stepId: 'approve', status: 'waiting' }])
  const writes = externalTaskWrites(change({ previous, state: state([waiting('x1')]), effects: [created('x1')] }, 'rollback'))
  t.same((writes[0] as { doc: Record<string, unknown> }).doc.rollbackState, previous)
})

t.test('tasks no thread waits for any more are removed; one created and left in the same change is never stored', async (t) => {
  const writes = externalTaskWrites(
    change({ previous: state([waiting('x1'), waiting('x2')]), state: state([waiting('x2')]), effects: [created('x3')] }),
  )
  t.same(writes, [{ collection: 'externalTasks', kind: 'deleteMany', filter: { _id: { $in: ['x1'] } } }])
})

t.test('a suspension holds the waiting tasks, a resumption frees them, a cancellation removes them', async (t) => {
  const suspended = externalTaskWrites(change({ previous: state([waiting('x1')]), state: state([waiting('x1')], 'suspended') }))
  t.match(suspended, [{ kind: 'updateMany', filter: { processInstanceId: 'pi-1' }, update: { $set: { suspended: true } } }])
  const resumed = externalTaskWrites(change({ previous: state([waiting('x1')], 'suspended'), state: state([waiting('x1')]) }))
  t.match(resumed, [{ kind: 'updateMany', update: { $set: { suspended: false } } }])
  const cancelled = externalTaskWrites(
    change({ previous: state([waiting('x1')]), state: state([{ ...waiting('x1'), status: 'done' }], 'cancelled') }),
  )
  t.match(cancelled, [{ kind: 'deleteMany', filter: { _id: { $in: ['x1'] } } }])
  t.same(externalTaskWrites(change({ previous: state([]), state: state([]) })), [], 'nothing for a change without external tasks')
})
