/**
 * The engine's workflow metrics. Label values are bounded: process, step and function ids come from
 * deployed models, statuses and outcomes from fixed lists; never instance, task or user ids.
 */
import { DURATION_BUCKETS, STORE_BUCKETS, ServiceMetrics } from './service-metrics.js'

/** How a flow-function run ended: `business` a `fail` node, `technical` any other failure, `timeout` its time limit. */
export type FunctionOutcome = 'ok' | 'business' | 'technical' | 'timeout'

/** Open tasks counted per process and step, as the store holds them (a resync replaces them all). */
export interface OpenTaskCount {
  processId: string
  stepId: string
  count: number
}

/** User tasks stay open from minutes to weeks. */
const TASK_BUCKETS = [1, 10, 60, 300, 900, 3600, 4 * 3600, 86_400, 3 * 86_400, 7 * 86_400, 30 * 86_400]

/** Journal batches group the writes that arrive while one commits: from one to hundreds. */
const BATCH_SIZE_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]

/** Workers answer in milliseconds to hours. */
const EXTERNAL_TASK_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 5, 30, 60, 300, 3600, 86_400]

export class EngineMetrics extends ServiceMetrics {
  private readonly started = this.counter('workflow_process_instances_started_total', 'Process instances started.', ['process_id'])
  private readonly ended = this.counter(
    'workflow_process_instances_ended_total',
    'Process instances that ended, by how (completed, cancelled).',
    ['process_id', 'status'],
  )
  private readonly failed = this.counter(
    'workflow_process_instances_failed_total',
    'Process instance threads that failed at a step (onError "fail").',
    ['process_id'],
  )
  private readonly tasksCompleted = this.counter(
    'workflow_tasks_completed_total',
    'User tasks ended by an action, by process, step and action type.',
    ['process_id', 'step_id', 'action_type'],
  )
  private readonly taskDuration = this.histogram(
    'workflow_task_duration_seconds',
    'Time user tasks stayed open, from creation until an action ended them.',
    TASK_BUCKETS,
    ['process_id', 'step_id'],
  )
  private readonly tasksOpen = this.gauge(
    'workflow_tasks_open',
    'Open user tasks, by process and step (a count kept up to date, resynchronised from the store now and then).',
    ['process_id', 'step_id'],
  )
  private readonly functionDuration = this.preparedHistogram(
    'workflow_flow_function_duration_seconds',
    'Flow-function runs, by function id and outcome (ok, business, technical, timeout).',
    DURATION_BUCKETS,
    ['function_id', 'outcome'],
  )
  private readonly purged = this.counter(
    'workflow_process_instances_purged_total',
    'Ended process instances removed for good, by why: an admin asked (request) or HISTORY_RETENTION_DAYS passed (retention).',
    ['reason'],
  )
  private readonly movedToPool = this.counter(
    'workflow_flow_function_runs_moved_to_pool_total',
    'Flow-function runs that went to the worker pool instead of the engine thread, by why (costly, inlineOff, threadTime, ' +
      'costlyCall, largeInput, largeValue).',
    ['reason'],
  )
  private readonly scheduleFirings = this.counter(
    'workflow_schedule_firings_total',
    'Schedule ticks this engine fired (each one queues a scheduledRun batch job).',
  )
  private readonly waitsEnded = this.counter(
    'workflow_waits_ended_total',
    'Waiting threads moved on, by process and by what they waited for: timerFired (a timer step or a receive timeout), ' +
      'messageReceived, childReturned (a callProcess child ended).',
    ['process_id', 'event'],
  )
  private readonly messages = this.counter(
    'workflow_messages_correlated_total',
    'Messages sent to /message/correlate and buffered messages delivered, by outcome (delivered, buffered, noThread, ambiguous).',
    ['outcome'],
  )
  private readonly storeDuration = this.preparedHistogram(
    'workflow_store_operation_duration_seconds',
    'Store calls, by collection and operation.',
    STORE_BUCKETS,
    ['collection', 'operation'],
  )
  private readonly journalCommitDuration = this.histogram(
    'workflow_journal_commit_duration_seconds',
    'Embedded store: time from handing a batch to the journal thread until SQLite committed it.',
    STORE_BUCKETS,
  )
  private readonly journalBatchWrites = this.histogram(
    'workflow_journal_batch_writes',
    'Embedded store: writes grouped into one journal commit.',
    BATCH_SIZE_BUCKETS,
  )

  private readonly externalTaskLockLapses = this.counter(
    'workflow_external_task_lock_lapses_total',
    'External tasks handed out again after the lock of the worker holding them lapsed, by topic.',
    ['topic'],
  )
  private readonly externalTaskDuration = this.histogram(
    'workflow_external_task_duration_seconds',
    'Worker latency: time from an external task being created until a worker completed it, by topic.',
    EXTERNAL_TASK_BUCKETS,
    ['topic'],
  )

  private countBatchJobs: (() => Promise<Record<string, number>>) | undefined
  private countWaitingExternalTasks: (() => Promise<Record<string, number>>) | undefined

  constructor() {
    super()
    const readBatchJobCounts = async (): Promise<Record<string, number>> => (await this.countBatchJobs?.()) ?? {}
    this.gauge(
      'workflow_batch_jobs',
      'Batch jobs in the store, by status (counted through the status index at each scrape).',
      ['status'],
      async function collect() {
        for (const [status, count] of Object.entries(await readBatchJobCounts())) this.set({ status }, count)
      },
    )
    const readWaitingExternalTasks = async (): Promise<Record<string, number>> => (await this.countWaitingExternalTasks?.()) ?? {}
    this.gauge(
      'workflow_external_tasks_waiting',
      'External tasks waiting for a worker (not locked), by topic (counted in the store at each scrape).',
      ['topic'],
      async function collect() {
        this.reset()
        for (const [topic, count] of Object.entries(await readWaitingExternalTasks())) this.set({ topic }, count)
      },
    )
  }

  /** Where the waiting external tasks gauge reads its counts by topic at each scrape. */
  readWaitingExternalTasksWith(count: () => Promise<Record<string, number>>): void {
    this.countWaitingExternalTasks = count
  }

  externalTaskLockLapsed(topic: string): void {
    this.externalTaskLockLapses.inc({ topic })
  }

  externalTaskCompleted(topic: string, seconds: number): void {
    this.externalTaskDuration.observe({ topic }, seconds)
  }

  /** Where the batch-job gauge reads its counts at each scrape: through an index, never a scan. */
  readBatchJobCountsWith(count: () => Promise<Record<string, number>>): void {
    this.countBatchJobs = count
  }

  instanceStarted(processId: string): void {
    this.started.inc({ process_id: processId })
  }

  instanceEnded(processId: string, status: 'completed' | 'cancelled'): void {
    this.ended.inc({ process_id: processId, status })
  }

  /** A waiting thread moved on (`event`: timerFired, messageReceived, childReturned). */
  waitEnded(processId: string, event: 'timerFired' | 'messageReceived' | 'childReturned'): void {
    this.waitsEnded.inc({ process_id: processId, event })
  }

  messageCorrelated(outcome: 'delivered' | 'buffered' | 'noThread' | 'ambiguous'): void {
    this.messages.inc({ outcome })
  }

  instanceFailed(processId: string): void {
    this.failed.inc({ process_id: processId })
  }

  taskOpened(processId: string, stepId: string): void {
    this.tasksOpen.inc({ process_id: processId, step_id: stepId })
  }

  /** An action ended the task: counted, its open time measured, the open count lowered. */
  taskCompleted(processId: string, stepId: string, actionType: string, openSeconds: number): void {
    this.tasksCompleted.inc({ process_id: processId, step_id: stepId, action_type: actionType })
    if (openSeconds >= 0) this.taskDuration.observe({ process_id: processId, step_id: stepId }, openSeconds)
    this.tasksOpen.dec({ process_id: processId, step_id: stepId })
  }

  /** Cancelled with its process or by a step change: no longer open, not completed. */
  taskCancelled(processId: string, stepId: string): void {
    this.tasksOpen.dec({ process_id: processId, step_id: stepId })
  }

  /** Replaces the open-task counts by the store's (at start, then now and then). */
  resetOpenTasks(counts: readonly OpenTaskCount[]): void {
    this.tasksOpen.reset()
    for (const { processId, stepId, count } of counts) this.tasksOpen.set({ process_id: processId, step_id: stepId }, count)
  }

  functionRan(functionId: string, outcome: FunctionOutcome, seconds: number): void {
    this.functionDuration.cellOf(functionId, outcome).observe(seconds)
  }

  instancesPurged(reason: 'request' | 'retention', count: number): void {
    this.purged.inc({ reason }, count)
  }

  /** A flow-function run went to the worker pool (services/engine/flow-host/isolation/inline-first.ts says why). */
  functionMovedToPool(reason: string): void {
    this.movedToPool.inc({ reason })
  }

  schedulesFired(count: number): void {
    this.scheduleFirings.inc(count)
  }

  storeOperation(collection: string, operation: string, seconds: number): void {
    this.storeDuration.cellOf(collection, operation).observe(seconds)
  }

  journalCommitted(seconds: number, writes: number): void {
    this.journalCommitDuration.observe(seconds)
    this.journalBatchWrites.observe(writes)
  }
}
