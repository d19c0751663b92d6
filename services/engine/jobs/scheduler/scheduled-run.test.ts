import t from 'tap'
import type { StoredBatchJob } from '../../../../store/collections.js'
import { silentLogger } from '../../../testing/harness.js'
import { type ClaimedBatchJob, isPermanentFailure } from '../batch/handlers.js'
import { type ScheduledActions, type ScheduledFunctionRun, type ScheduledStart, scheduledRunHandler } from './scheduled-run.js'

const NOW = new Date('2025-06-30T08:00:00.000Z')

function job(payload: Record<string, unknown>): ClaimedBatchJob {
  const stored: StoredBatchJob = {
    _id: 'job-1',
    jobId: 'job-1',
    kind: 'scheduledRun',
    status: 'running',
    appId: 'hr',
    organizationId: 'acme',
    tryCount: 0,
    dueAt: NOW,
    createdAt: NOW,
    updatedAt: NOW,
    payload: { modelID: 'nightly', modelVersion: 3, scheduleId: 's', tick: NOW.toISOString(), ...payload },
  }
  return stored as ClaimedBatchJob
}

function recordingActions(): { actions: ScheduledActions; starts: ScheduledStart[]; runs: ScheduledFunctionRun[] } {
  const starts: ScheduledStart[] = []
  const runs: ScheduledFunctionRun[] = []
  return {
    starts,
    runs,
    actions: {
      startProcess: async (request) => {
        starts.push(request)
        return { processInstanceId: 'pi-1' }
      },
      runFunction: async (request) => {
        runs.push(request)
        return { output: {} }
      },
    },
  }
}

t.test("a fired startProcess schedule starts the process in the job's tenant as the given initiator", async (t) => {
  const { actions, starts, runs } = recordingActions()
  await scheduledRunHandler(actions)(job({ startProcess: { processId: 'leave-request', input: { days: 2 }, initiatorUserId: 'u-1' } }), {
    now: NOW,
    log: silentLogger,
  })
  t.match(starts, [{ appId: 'hr', organizationId: 'acme', processId: 'leave-request', input: { days: 2 }, initiatorUserId: 'u-1' }])
  t.same(runs, [])
})

t.test('a fired runFunction schedule runs the function standalone with its inputParams (none: an empty object)', async (t) => {
  const { actions, starts, runs } = recordingActions()
  const handler = scheduledRunHandler(actions)
  await handler(job({ runFunction: { functionId: 'vatOf', inputParams: { amount: 100 } } }), { now: NOW, log: silentLogger })
  await handler(job({ runFunction: { functionId: 'cleanup' } }), { now: NOW, log: silentLogger })
  t.same(runs, [
    { appId: 'hr', organizationId: 'acme', functionId: 'vatOf', inputParams: { amount: 100 } },
    { appId: 'hr', organizationId: 'acme', functionId: 'cleanup', inputParams: {} },
  ])
  t.same(starts, [])
})

t.test('a payload that names no action is a permanent failure, and nothing runs', async (t) => {
  const { actions, starts, runs } = recordingActions()
  const failure = await scheduledRunHandler(actions)(job({}), { now: NOW, log: silentLogger }).then(
    () => undefined,
    (error: unknown) => error,
  )
  t.match(failure, { message: 'payload must have exactly one of startProcess and runFunction' })
  t.ok(isPermanentFailure(failure))
  t.same([...starts, ...runs], [])
})

t.test('a startProcess job names its instance after the job, so running it again cannot start a second one', async (t) => {
  const { actions, starts } = recordingActions()
  const handler = scheduledRunHandler(actions)
  const payload = { startProcess: { processId: 'leave-request', input: { days: 1 } } }
  await handler(job(payload), { now: NOW, log: silentLogger })
  await handler(job(payload), { now: NOW, log: silentLogger })
  const other = { ...job(payload), _id: 'job-2', jobId: 'job-2' } as ClaimedBatchJob
  await handler(other, { now: NOW, log: silentLogger })
  t.match(starts[0]?.processInstanceId, /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
  t.equal(starts[1]?.processInstanceId, starts[0]?.processInstanceId, 'the same job, the same instance id')
  t.not(starts[2]?.processInstanceId, starts[0]?.processInstanceId, 'another job, another instance')
})
