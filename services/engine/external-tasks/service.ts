/**
 * What workers do with external tasks (docs/reference/external-tasks.md): fetch and lock them (with
 * long polling), complete them, report failures, extend and give back their locks. Only system
 * users of the task's tenant work them; another tenant's task is not found. A completion or a
 * final failure is one compare-and-set commit of the instance that also requires the worker's lock
 * (a guard write in the same atomic batch), so a worker whose lock lapsed and was taken over
 * changes nothing.
 */
import { randomInt } from 'node:crypto'
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type {
  CompleteExternalTaskRequest,
  ExtendExternalTaskLockRequest,
  ExternalTaskFailureRequest,
  ExternalTaskWorkerRequest,
  FetchAndLockRequest,
  IsSuccess,
  LockedExternalTasks,
} from '../../../openapi/generated/schemas.js'
import type { EngineErrorCode } from '../../../openapi/generated/errors.js'
import { type ErrorFactory, isServiceError } from '../../../plugins/errors/service-error.js'
import type { Actor } from '../../../plugins/identity/actor.js'
import type { EngineMetrics } from '../../../lib/telemetry/engine-metrics.js'
import type { StoredExternalTask } from '../../../store/collections.js'
import type { Tenant } from '../../../store/tenant.js'
import { RuntimeError, type Transition } from '../../../runtime/types.js'
import { runtimeUserOf } from '../flow-host/environment.js'
import { commitChange } from '../instances/loaded-instance-operations.js'
import { type LoadedInstance, stateOf } from '../instances/loaded-instance.js'
import { runtimeFailure } from '../instances/runtime-errors.js'
import type { ActivityEntry } from '../instances/service.js'
import { ENGINE_DEPENDENCY_PLUGINS, type EngineDependencies, engineDependencies } from '../instances/dependencies.js'
import { externalTaskWrites } from './commit-writes.js'
import { type ExternalTaskRepository, lockGuard } from './repository.js'
import { TaskSignals } from './signals.js'

declare module 'fastify' {
  interface FastifyInstance {
    externalTaskService: ExternalTaskService
  }
}

export interface ExternalTaskSettings {
  /** How often a long poll looks at the store for tasks other engines created (EXTERNAL_TASK_POLL_MS). */
  pollMs: number
}

type Dependencies = Pick<EngineDependencies, 'instances' | 'models' | 'environments' | 'fail' | 'now'> & {
  repository: ExternalTaskRepository
  signals: TaskSignals
  metrics: EngineMetrics | null
  log: FastifyBaseLogger
}

/** Candidates read per round beyond the tasks asked for: some may be taken by another worker meanwhile. */
const SPARE_CANDIDATES = 10

/**
 * The oldest candidates in random order: workers fetching at once would otherwise all try the same
 * oldest task first, and all but one would lose each race in turn.
 */
function shuffled<T>(items: T[]): T[] {
  for (let index = items.length - 1; index > 0; index--) {
    const other = randomInt(index + 1)
    ;[items[index], items[other]] = [items[other] as T, items[index] as T]
  }
  return items
}

function tenantOf(actor: Actor): Tenant {
  return { organizationId: actor.organizationId, appId: actor.appId }
}

function answerOf(task: StoredExternalTask): LockedExternalTasks[number] {
  return {
    externalTaskId: task._id,
    topic: task.topic,
    input: task.input,
    processInstanceId: task.processInstanceId,
    processId: task.processId,
    businessKey: task.businessKey,
    stepId: task.stepId,
    retries: task.retries,
    ...(task.errorMessage === undefined ? {} : { errorMessage: task.errorMessage }),
    workerId: task.workerId ?? '',
    lockExpiresAt: (task.lockExpiresAt ?? task.availableAt).toISOString(),
    createdAt: task.createdAt.toISOString(),
  }
}

export class ExternalTaskService {
  private readonly fail: ErrorFactory<EngineErrorCode>

  constructor(
    private readonly deps: Dependencies,
    private readonly settings: ExternalTaskSettings,
  ) {
    this.fail = deps.fail
  }

  /** How many fetchAndLock requests wait on this engine now. */
  get longPolls(): number {
    return this.deps.signals.listening
  }

  /** Locks up to maxTasks available tasks, waiting up to asyncResponseTimeout ms for one when none is. */
  async fetchAndLock(actor: Actor, body: FetchAndLockRequest, signal: AbortSignal): Promise<LockedExternalTasks> {
    this.assertWorker(actor)
    const tenant = tenantOf(actor)
    const lockDurations = new Map(body.topics.map(({ topic, lockDuration }) => [topic, lockDuration]))
    const topics = [...lockDurations.keys()]
    // The wait is the client's, in real time; lock ends are the engine's clock.
    const waitUntil = Date.now() + (body.asyncResponseTimeout ?? 0)
    for (;;) {
      const wakeup = this.deps.signals.listen(tenant, topics)
      try {
        const locked = await this.lockAvailable(tenant, topics, lockDurations, body.workerId, body.maxTasks)
        if (signal.aborted) {
          // Nobody reads the answer: the tasks go back at once rather than when their locks lapse.
          await this.giveBack(locked, body.workerId)
          return []
        }
        const remaining = waitUntil - Date.now()
        if (locked.length > 0 || remaining <= 0 || this.deps.signals.isClosed) return locked.map(answerOf)
        await wakeup.until(Math.min(remaining, this.settings.pollMs), signal)
        if (signal.aborted) return []
      } finally {
        wakeup.cancel()
      }
    }
  }

  async complete(actor: Actor, externalTaskId: string, body: CompleteExternalTaskRequest): Promise<IsSuccess> {
    const task = await this.heldTask(actor, externalTaskId, body.workerId)
    const loaded = await this.loadInstanceOf(actor, task)
    const transition = await this.runtime(task, () =>
      loaded.compiled.completeExternalTask(stateOf(loaded.stored), task._id, body.output, loaded.env),
    )
    await this.commitAsWorker(loaded, actor, task, body.workerId, transition, 'TaskCompleted', 'externalTaskCompleted', {})
    this.deps.metrics?.externalTaskCompleted(task.topic, (this.deps.now().getTime() - task.createdAt.getTime()) / 1000)
    return { isSuccess: true }
  }

  async failure(actor: Actor, externalTaskId: string, body: ExternalTaskFailureRequest): Promise<IsSuccess> {
    const task = await this.heldTask(actor, externalTaskId, body.workerId)
    const retries = body.retries ?? Math.max(task.retries - 1, 0)
    const now = this.deps.now()
    if (retries > 0) {
      const availableAt = new Date(now.getTime() + (body.retryTimeout ?? 0))
      const released = await this.deps.repository.release(task._id, body.workerId, now, availableAt, {
        retries,
        errorMessage: body.errorMessage,
      })
      if (!released) throw await this.lockConflict(actor, task._id, body.workerId)
      if (availableAt.getTime() <= now.getTime()) this.deps.signals.notify(tenantOf(actor), task.topic)
      return { isSuccess: true }
    }
    const loaded = await this.loadInstanceOf(actor, task)
    const details = { errorMessage: body.errorMessage }
    // `rollback`: the instance as it was before the change that reached the step, if nothing changed it since.
    if (task.rollbackState && loaded.stored.version === task.instanceVersion) {
      const restored: Transition = { state: task.rollbackState, effects: [], infoList: [] }
      await this.commitAsWorker(loaded, actor, task, body.workerId, restored, 'Updated', 'externalTaskRolledBack', details)
      return { isSuccess: true }
    }
    const message = task.rollbackState
      ? `${body.errorMessage} (not rolled back: the instance changed after the task was created)`
      : body.errorMessage
    const transition = await this.runtime(task, () =>
      loaded.compiled.failExternalTask(stateOf(loaded.stored), task._id, message, loaded.env),
    )
    await this.commitAsWorker(loaded, actor, task, body.workerId, transition, 'Updated', 'externalTaskFailed', details)
    return { isSuccess: true }
  }

  async extendLock(actor: Actor, externalTaskId: string, body: ExtendExternalTaskLockRequest): Promise<IsSuccess> {
    const task = await this.heldTask(actor, externalTaskId, body.workerId)
    const now = this.deps.now()
    const extended = await this.deps.repository.extendLock(task._id, body.workerId, now, new Date(now.getTime() + body.newDuration))
    if (!extended) throw await this.lockConflict(actor, task._id, body.workerId)
    return { isSuccess: true }
  }

  async unlock(actor: Actor, externalTaskId: string, body: ExternalTaskWorkerRequest): Promise<IsSuccess> {
    const task = await this.heldTask(actor, externalTaskId, body.workerId)
    const now = this.deps.now()
    if (!(await this.deps.repository.release(task._id, body.workerId, now, now)))
      throw await this.lockConflict(actor, task._id, body.workerId)
    this.deps.signals.notify(tenantOf(actor), task.topic)
    return { isSuccess: true }
  }

  /** Wakes this engine's long polls for the tasks a stored change created. */
  tasksCreated(tenant: Tenant, topics: Iterable<string>): void {
    for (const topic of new Set(topics)) this.deps.signals.notify(tenant, topic)
  }

  private async lockAvailable(
    tenant: Tenant,
    topics: readonly string[],
    lockDurations: ReadonlyMap<string, number>,
    workerId: string,
    maxTasks: number,
  ): Promise<StoredExternalTask[]> {
    const { repository, metrics } = this.deps
    const now = this.deps.now()
    const locked: StoredExternalTask[] = []
    const candidates = shuffled(await repository.available(tenant, topics, now, maxTasks + SPARE_CANDIDATES))
    for (const candidate of candidates) {
      if (locked.length >= maxTasks) break
      const until = new Date(now.getTime() + (lockDurations.get(candidate.topic) ?? 0))
      const outcome = await repository.lock(candidate._id, workerId, now, until)
      if (!outcome) continue
      if (outcome.lapsed) metrics?.externalTaskLockLapsed(candidate.topic)
      locked.push(outcome.task)
    }
    return locked.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime())
  }

  private async giveBack(tasks: readonly StoredExternalTask[], workerId: string): Promise<void> {
    const now = this.deps.now()
    await Promise.all(tasks.map((task) => this.deps.repository.release(task._id, workerId, now, now)))
  }

  /** 403 wm3230 for anyone but a system user of the tenant. */
  private assertWorker(actor: Actor): void {
    if (!actor.isSystemUser) throw this.fail('wm3230', { args: [actor.userId], parameters: { userId: actor.userId } })
  }

  /** The tenant's task (404 wm3231 otherwise) locked by the worker (409 wm3232 / wm3233 otherwise). */
  private async heldTask(actor: Actor, externalTaskId: string, workerId: string): Promise<StoredExternalTask> {
    this.assertWorker(actor)
    const task = await this.deps.repository.find(tenantOf(actor), externalTaskId)
    if (!task) throw this.notFound(externalTaskId)
    const now = this.deps.now()
    if (task.workerId !== workerId || !task.lockExpiresAt || task.lockExpiresAt.getTime() <= now.getTime()) {
      throw this.conflictOf(task, workerId, now)
    }
    return task
  }

  private notFound(externalTaskId: string) {
    return this.fail('wm3231', { args: [externalTaskId], parameters: { externalTaskId } })
  }

  /** Why the worker's conditional write matched nothing, read afresh. */
  private async lockConflict(actor: Actor, externalTaskId: string, workerId: string) {
    const task = await this.deps.repository.find(tenantOf(actor), externalTaskId)
    return task ? this.conflictOf(task, workerId, this.deps.now()) : this.notFound(externalTaskId)
  }

  private conflictOf(task: StoredExternalTask, workerId: string, now: Date) {
    const heldByOther = task.workerId !== undefined && task.workerId !== workerId && (task.lockExpiresAt?.getTime() ?? 0) > now.getTime()
    if (heldByOther) return this.fail('wm3232', { args: [task._id], parameters: { externalTaskId: task._id } })
    return this.fail('wm3233', { args: [task._id, workerId], parameters: { externalTaskId: task._id, workerId } })
  }

  private async loadInstanceOf(actor: Actor, task: StoredExternalTask): Promise<LoadedInstance> {
    const { instances, models, environments } = this.deps
    const stored = await instances.find(task.processInstanceId)
    if (!stored) throw this.notFound(task._id)
    const compiled = await models.ofInstance(stored.processInstance)
    const env = await environments.create({ actor: runtimeUserOf(actor), appId: stored.appId, organizationId: stored.organizationId })
    return { stored, compiled, env }
  }

  /** A runtime call on the task's instance: an output it cannot store is 400 wm3234, a task no thread waits for 404 wm3231. */
  private async runtime(task: StoredExternalTask, call: () => Promise<Transition>): Promise<Transition> {
    try {
      return await call()
    } catch (error) {
      if (error instanceof RuntimeError && error.details.target === 'externalTask') throw this.notFound(task._id)
      if (error instanceof RuntimeError && error.kind === 'validation' && error.details.path === 'output') {
        throw this.fail('wm3234', { args: [task._id, error.message], parameters: { externalTaskId: task._id }, cause: error })
      }
      throw runtimeFailure(this.fail, error, 'advance')
    }
  }

  private async commitAsWorker(
    loaded: LoadedInstance,
    actor: Actor,
    task: StoredExternalTask,
    workerId: string,
    transition: Transition,
    event: 'TaskCompleted' | 'Updated',
    activity: ActivityEntry['type'],
    details: Record<string, unknown>,
  ): Promise<void> {
    try {
      await commitChange(this.deps, loaded, actor, {
        state: transition.state,
        effects: transition.effects,
        event,
        activities: [
          { type: activity, stepId: task.stepId, details: { externalTaskId: task._id, topic: task.topic, workerId, ...details } },
        ],
        guards: [lockGuard(task._id, workerId, this.deps.now())],
      })
    } catch (error) {
      // The guard or the instance's compare-and-set lost: tell the worker about its lock when that is why.
      if (isServiceError(error) && error.code === 'wm3042') {
        const current = await this.deps.repository.find(tenantOf(actor), task._id)
        const now = this.deps.now()
        if (!current) throw this.notFound(task._id)
        if (current.workerId !== workerId || (current.lockExpiresAt?.getTime() ?? 0) <= now.getTime())
          throw this.conflictOf(current, workerId, now)
      }
      throw error
    }
  }
}

async function externalTasksPlugin(fastify: FastifyInstance, settings: ExternalTaskSettings): Promise<void> {
  const signals = new TaskSignals()
  const service = new ExternalTaskService(
    { ...engineDependencies(fastify), repository: fastify.externalTasks, signals, metrics: fastify.engineMetrics, log: fastify.log },
    settings,
  )
  fastify.decorate('externalTaskService', service)
  // The tasks a change creates are stored with it, or not at all; this engine's long polls hear of them at once.
  fastify.processInstances.addCommitHook({
    name: 'external tasks',
    writesFor: (change) => externalTaskWrites(change),
    stored: (change, writes) => {
      const topics = writes.flatMap((write) => (write.kind === 'insertOne' ? [String(write.doc.topic)] : []))
      if (topics.length > 0) service.tasksCreated(change.state.processInstance, topics)
    },
  })
  fastify.engineMetrics?.readWaitingExternalTasksWith(() => fastify.externalTasks.countWaitingByTopic(fastify.clock()))
  // Long polls end before the server waits for its requests to finish.
  fastify.addHook('preClose', async () => signals.close())
}

export default fp(externalTasksPlugin, {
  name: 'external-tasks',
  dependencies: [...ENGINE_DEPENDENCY_PLUGINS, 'external-tasks-repository', 'metrics'],
})
