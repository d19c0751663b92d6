/**
 * Loading and changing process instances. Every change goes through `commit`: the new state is
 * written (an insert, or a compare-and-set on the version the change was computed from) with its
 * activity log and the fields the commit hooks derive (the notification record's notice, the
 * escalations' due dates), in one atomic batch with the request's data writes (its unit of work),
 * the activity records moved out of the log and what the commit hooks add (commit-hooks.ts: webhook
 * deliveries, escalation jobs). A request that fails before the write, loses the compare-and-set or
 * dies mid-commit leaves the stored state exactly as it was.
 */
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { ActivityType, NotificationEventType } from '../../../openapi/generated/schemas.js'
import type { EngineErrorCode } from '../../../openapi/generated/errors.js'
import type { ErrorFactory } from '../../../plugins/errors/service-error.js'
import type { ChangeFields, StoredContext } from '../../../store/collections.js'
import type { AtomicWrite } from '../../../store/port.js'
import type { ActivityRepository } from './activities.js'
import type { Authorization, Principal } from './authorization.js'
import { type ChangeToStore, type CommitHook, CommitHooks } from './commit-hooks.js'
import type { RequestEnvironment } from '../flow-host/environment.js'
import { storingDataWrites } from '../flow-host/data-conflicts.js'
import type { CompiledProcess, ProcessInstance, ProcessState, RuntimeEffect } from '../../../runtime/types.js'
import type { ContextRepository } from './repository.js'
import { type InstanceLimits, limitBreach } from './size-limits.js'
import { withFields } from '../../../lib/with-fields.js'

declare module 'fastify' {
  interface FastifyInstance {
    processInstances: ProcessInstances
  }
}

/** Who did it, as activity records name them. */
export interface ActingUser {
  userId: string
  fullName: string
}

export interface ActivityEntry {
  type: ActivityType
  taskId?: string
  stepId?: string
  details?: Record<string, unknown>
}

export interface Change {
  /** The stored instance the change was computed from; absent for a new instance. */
  previous?: StoredContext
  state: ProcessState
  effects: readonly RuntimeEffect[]
  compiled: CompiledProcess
  /** The request's environment: its unit of work's data writes are stored with the change. */
  env: RequestEnvironment
  /** null for headless calls that name no user. */
  actor: ActingUser | null
  /** The operation's notification event (adjusted to Finished/Failed by the effects). */
  event: NotificationEventType
  activities: ActivityEntry[]
  /**
   * Further writes of the operation that only make sense once the change is stored (the claim of
   * the next task's lock, which another user may race for): they run while it is announced, not
   * after, so the request waits for the store once for all of them. Their failure fails the
   * request, as it would after the announcement.
   */
  alongside?: (stored: StoredContext) => Promise<unknown>
  /** Further writes stored in the change's atomic batch: a buffered message marked as taken, a new task's lock, a task's release. */
  writes?: readonly AtomicWrite[]
  /**
   * Writes that must match a document for the change to be stored (`mustMatch`): an external
   * task's lock, held by the worker completing it. One that matches nothing fails the commit as a
   * lost compare-and-set does (409 wm3042), storing nothing.
   */
  guards?: readonly AtomicWrite[]
  /**
   * The change may be stored while the instance is suspended: notes, and the process-control
   * operations themselves. Every other change of a suspended instance is refused (409 wm3140).
   */
  allowedWhileSuspended?: true
}

/**
 * Is the instance suspended: every change but notes and the process-control operations is refused
 * until it is resumed, and work scheduled for it (escalations) waits.
 */
export function isSuspended(instance: Pick<ProcessInstance, 'processStatus'>): boolean {
  return instance.processStatus === 'suspended'
}

/**
 * The state as stored: `lastUpdate` is the time of this change, and users that tasks were assigned
 * to, or who ended one, join `contributorUsers` (docs/reference/instances.md#contributors).
 */
export function withBookkeeping(state: ProcessState, effects: readonly RuntimeEffect[], now: Date): ProcessState {
  const contributors = new Set(state.processInstance.contributorUsers)
  for (const effect of effects) {
    if (effect.kind === 'taskCreated' && effect.task.userId) contributors.add(effect.task.userId)
    // Whoever ended a task held it, pool tasks included, and keeps seeing the process they acted on.
    if (effect.kind === 'taskEnded' && effect.task.completedBy) contributors.add(effect.task.completedBy)
  }
  return {
    dataInstance: state.dataInstance,
    processInstance: { ...state.processInstance, lastUpdate: now.toISOString(), contributorUsers: [...contributors] },
  }
}

function stateOfStored(stored: StoredContext): ProcessState {
  return { processInstance: stored.processInstance, dataInstance: stored.dataInstance }
}

export class ProcessInstances {
  private readonly hooks = new CommitHooks()

  constructor(
    private readonly contexts: ContextRepository,
    private readonly activities: ActivityRepository,
    private readonly authorization: Authorization,
    private readonly fail: ErrorFactory<EngineErrorCode>,
    private readonly log: FastifyBaseLogger,
    private readonly limits: InstanceLimits,
  ) {}

  /** Adds what every stored change also writes or tells (the folders that own it register it at boot). */
  addCommitHook(hook: CommitHook): void {
    this.hooks.add(hook)
  }

  /** The stored instance, or null. */
  find(processInstanceId: string): Promise<StoredContext | null> {
    return this.contexts.find(processInstanceId)
  }

  /** The stored instance (404 wm3001 when there is none). */
  async load(processInstanceId: string): Promise<StoredContext> {
    const stored = await this.contexts.find(processInstanceId)
    if (!stored) throw this.notFound(processInstanceId)
    return stored
  }

  /** The stored instance, once the user is known to be authorized on it (404 other tenant, 403 wm4030). */
  async loadFor(principal: Principal, processInstanceId: string): Promise<StoredContext> {
    const stored = await this.load(processInstanceId)
    this.assertAccess(principal, stored)
    return stored
  }

  /** 404 wm3001 for another tenant's instance, 403 wm4030 when the user is not authorized on it. */
  assertAccess(principal: Principal, stored: StoredContext): void {
    this.authorization.assertAccess(principal, stored.processInstance)
  }

  notFound(processInstanceId: string) {
    return this.fail('wm3001', { args: [processInstanceId], parameters: { processInstanceId } })
  }

  /**
   * Stores the change (409 wm3042 when the instance changed since it was read, 409 wm3140 when it is
   * suspended and the change is not one allowed then) in one atomic batch with everything that
   * describes it: the data writes of the request's flow functions, its activity records and the
   * writes of the commit hooks (the webhook deliveries of its event, the escalation jobs of new
   * tasks) with the fields they derive (the notification record's notice, the escalations' due
   * dates). A crash or a lost compare-and-set leaves none of them, a stored change all of them.
   */
  async commit(change: Change): Promise<StoredContext> {
    // The one gate every change of an instance passes: a suspended instance changes only by a note
    // or a control operation. A suspension stored after `previous` was read fails the compare-and-set.
    if (change.previous && isSuspended(change.previous) && change.allowedWhileSuspended !== true) {
      const id = change.previous._id
      throw this.fail('wm3140', { args: [id], parameters: { processInstanceId: id } })
    }
    const now = change.env.now()
    const state = withBookkeeping(change.state, change.effects, now)
    const processInstanceId = state.processInstance.processInstanceId
    // The same gate for size: nothing of a change past a limit is stored.
    const breach = limitBreach(this.limits, change.previous, state)
    if (breach) throw this.fail(breach.code, { args: breach.args, parameters: breach.parameters })
    const timeStamp = now.toISOString()
    const { activityLog, writes: activityWrites } = this.activities.logged(
      processInstanceId,
      change.previous?.activityLog,
      change.activities.map((activity) => ({
        timeStamp,
        userId: change.actor?.userId ?? null,
        ...(change.actor ? { userName: change.actor.fullName } : {}),
        ...activity,
      })),
    )
    const toStore: ChangeToStore = {
      state,
      effects: change.effects,
      compiled: change.compiled,
      env: change.env,
      event: change.event,
      version: change.previous ? change.previous.version + 1 : 1,
      now,
      started: change.previous === undefined,
      // Spreads last: a field named after one takes V8's slow path (lib/with-fields.ts).
      ...(change.previous ? { previous: stateOfStored(change.previous) } : {}),
    }
    const hookWrites = await this.hooks.writesFor(toStore)
    const hookFields = await this.hooks.fieldsFor(toStore)
    const alongside = [
      ...(change.guards ?? []),
      ...change.env.unitOfWork.writes(),
      ...(change.writes ?? []),
      ...activityWrites,
      ...hookWrites.flat(),
    ]
    const stored = await storingDataWrites(this.fail, change.env.unitOfWork, () =>
      this.write(change.previous, state, withFields(hookFields, { activityLog }), alongside),
    )
    this.hooks.stored(toStore, hookWrites)
    await change.alongside?.(stored)
    return stored
  }

  /** The insert of a new instance, or the compare-and-set over `previous` (409 wm3042 when it is lost). */
  private async write(
    previous: StoredContext | undefined,
    state: ProcessState,
    fields: ChangeFields,
    alongside: readonly AtomicWrite[],
  ): Promise<StoredContext> {
    if (!previous) return this.contexts.insert(state, alongside, fields)
    const written = await this.contexts.compareAndSet(previous, state, alongside, fields)
    if (!written) throw this.fail('wm3042', { args: [previous._id], parameters: { processInstanceId: previous._id } })
    return written
  }
}

export interface ProcessInstancesOptions {
  limits: InstanceLimits
}

async function processInstancesPlugin(fastify: FastifyInstance, options: ProcessInstancesOptions): Promise<void> {
  const { contexts, activities, authorization, fail, log } = fastify
  fastify.decorate('processInstances', new ProcessInstances(contexts, activities, authorization, fail, log, options.limits))
}

export default fp(processInstancesPlugin, {
  name: 'process-instances',
  dependencies: ['contexts-repository', 'activities-repository', 'authorization', 'errors'],
})
