import t from 'tap'
import pino from 'pino'
import type { StoredContext } from '../../../../store/collections.js'
import type { NewBatchJob } from '../batch/repository.js'
import type { CompiledProcess, ProcessInstance } from '../../../../runtime/types.js'
import { ESCALATION_HORIZON_MS } from './jobs.js'
import { EscalationPromoter, LOOKBACK_MS } from './promoter.js'

const T0 = Date.parse('2026-03-02T08:30:00.000Z')
const HOUR = 60 * 60_000

/** An instance whose one open task was created at T0 on a step escalating after each of `afters`. */
function instanceWith(id: string, escalated: number[] = []): StoredContext {
  const processInstance = {
    processInstanceId: id,
    appId: 'hr',
    organizationId: 'acme',
    tasks: [{ taskId: `task-${id}`, stepId: 'request', status: 'open', createdAt: new Date(T0).toISOString(), escalated }],
  } as unknown as ProcessInstance
  return { _id: id, processInstance } as StoredContext
}

const compiled = (afters: string[]): Pick<CompiledProcess, 'step'> => ({
  step: () => ({ type: 'userTask', escalations: afters.map((after) => ({ after, do: 'notify' })) }) as ReturnType<CompiledProcess['step']>,
})

type ModelOf = (instance: ProcessInstance) => Promise<Pick<CompiledProcess, 'step'>>

/** A promoter over `instances`, every one on a model whose step escalates after each of `afters` (or as `modelOf` says). */
function promoterOver(instances: StoredContext[], afters: string[], clock: { now: number }, modelOf?: ModelOf) {
  const reads: Array<[Date | undefined, Date]> = []
  const enqueued: NewBatchJob[] = []
  const promoter = new EscalationPromoter({
    contexts: {
      escalationsDueIn: async (from, to) => {
        reads.push([from, to])
        return instances
      },
    },
    models: { ofInstance: modelOf ?? (async () => compiled(afters)) },
    batchJobs: {
      enqueue: async (job, now) => {
        enqueued.push(job)
        return { ...job, _id: job.scheduleKey ?? '', jobId: '', status: 'waiting', tryCount: 0, createdAt: now, updatedAt: now }
      },
    },
    now: () => new Date(clock.now),
    log: pino({ level: 'silent' }),
  })
  return { promoter, reads, enqueued }
}

t.test('the first pass reads from the beginning, each later one from where the last stopped less the look back', async (t) => {
  const clock = { now: T0 }
  const { promoter, reads } = promoterOver([], ['PT3H'], clock)
  await promoter.promote()
  clock.now += 1000
  await promoter.promote()
  t.same(reads, [
    [undefined, new Date(T0 + ESCALATION_HORIZON_MS)],
    [new Date(T0 + ESCALATION_HORIZON_MS - LOOKBACK_MS), new Date(T0 + 1000 + ESCALATION_HORIZON_MS)],
  ])
})

t.test('an escalation gets its job once it falls due within the horizon, and only once however often it is read', async (t) => {
  const clock = { now: T0 }
  const { promoter, enqueued } = promoterOver([instanceWith('a')], ['PT3H', 'PT5H'], clock)
  t.equal(await promoter.promote(), 0, 'three hours away: not yet')
  clock.now = T0 + 2 * HOUR
  t.equal(await promoter.promote(), 1)
  clock.now += 1000
  t.equal(await promoter.promote(), 0, 'read again in the look back: not inserted again')
  t.same(
    enqueued.map((job) => [job.scheduleKey, job.dueAt.toISOString(), job.payload]),
    [['escalation:task-a:0', '2026-03-02T11:30:00.000Z', { processInstanceId: 'a', taskId: 'task-a', stepId: 'request', position: 0 }]],
  )
  clock.now = T0 + 4 * HOUR + 1000
  t.equal(await promoter.promote(), 1, 'the second escalation in its turn')
  t.equal(enqueued[1]?.scheduleKey, 'escalation:task-a:1')
})

t.test('an escalation that already ran, or came due before the pass reads from, is left alone', async (t) => {
  const clock = { now: T0 + 2 * HOUR }
  const { promoter, enqueued } = promoterOver([instanceWith('a', [0])], ['PT1H', 'PT3H'], clock)
  await promoter.promote()
  t.same(
    enqueued.map((job) => job.scheduleKey),
    ['escalation:task-a:1'],
    'the first escalation ran: only the second is stored',
  )
  const late = promoterOver([instanceWith('b')], ['PT1H'], { now: T0 + 2 * HOUR })
  await late.promoter.promote()
  t.equal(late.enqueued.length, 1, 'the first pass reads from the beginning: an escalation overdue since an hour gets its job')
  const again = promoterOver([instanceWith('c')], ['PT1H'], clock)
  await again.promoter.promote()
  again.enqueued.length = 0
  clock.now += 3 * HOUR
  await again.promoter.promote()
  t.same(again.enqueued, [], 'a later pass reads only from where the one before stopped')
})

t.test('an instance whose model cannot be read does not hold up the others', async (t) => {
  const modelOf: ModelOf = async (instance) => {
    if (instance.processInstanceId === 'a') throw new Error('no such model')
    return compiled(['PT3H'])
  }
  const { promoter, enqueued } = promoterOver([instanceWith('a'), instanceWith('b')], [], { now: T0 + 2 * HOUR }, modelOf)
  t.equal(await promoter.promote(), 1)
  t.same(
    enqueued.map((job) => job.scheduleKey),
    ['escalation:task-b:0'],
  )
})
