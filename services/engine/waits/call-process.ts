/**
 * Child instances (docs/models.md#callprocess). A parent's change that reaches a callProcess step
 * queues a `startChild` job in its commit; the job starts the child (same tenant, the parent's
 * initiator, the id the parent chose, so a job run twice starts it once). A child's change that
 * ends it (completed, cancelled) or fails it queues a `childEnded` job in its commit; that job moves
 * the parent's thread on with a compare-and-set commit, which checks the thread still waits for
 * this child, so the parent resumes once whatever runs the job how often. A change that ends a
 * parent's wait for a child otherwise (the parent cancelled, a step change) queues `cancelChild`.
 */
import { isServiceError } from '../../../plugins/errors/service-error.js'
import type { Actor } from '../../../plugins/identity/actor.js'
import type { AtomicWrite } from '../../../store/port.js'
import { Collections, type StoredContext } from '../../../store/collections.js'
import type { ChildOutcome, ChildRequest, JsonObject, ProcessStatus } from '../../../runtime/types.js'
import { SYSTEM_USER } from '../flow-host/environment.js'
import type { ChangeToStore } from '../instances/commit-hooks.js'
import { type BatchJobHandler, PermanentJobError } from '../jobs/batch/handlers.js'
import { newBatchJob } from '../jobs/batch/repository.js'
import type { ProcessControl } from '../lifecycle/control.js'
import type { ProcessStarter } from '../lifecycle/start.js'
import { type MoveThreadDependencies, moveThreadForJob, type ThreadMove } from './move-thread.js'
import { changedWaits, jobsDueOnResume } from './thread-waits.js'

/** What the child's jobs name: the parent, its waiting thread and the child. */
export interface ChildJobPayload {
  /** The parent instance. */
  processInstanceId: string
  threadId: string
  childInstanceId: string
}

const ENDED: ReadonlySet<ProcessStatus> = new Set(['completed', 'cancelled', 'failed'])

function childPayloadOf(kind: string, payload: Record<string, unknown>): ChildJobPayload {
  const { processInstanceId, threadId, childInstanceId } = payload
  if (typeof processInstanceId !== 'string' || typeof threadId !== 'string' || typeof childInstanceId !== 'string') {
    throw new PermanentJobError(`a ${kind} job needs processInstanceId, threadId, childInstanceId: ${JSON.stringify(payload)}`)
  }
  return { processInstanceId, threadId, childInstanceId }
}

/** The child-instance jobs a change queues: start the children it asks for, tell its parent it ended, cancel the children
 * no longer waited for. */
export function childJobWrites({
  previous,
  state,
  effects,
  now,
}: Pick<ChangeToStore, 'previous' | 'state' | 'effects' | 'now'>): AtomicWrite[] {
  const instance = state.processInstance
  const tenant = { appId: instance.appId, organizationId: instance.organizationId }
  const job = (kind: 'startChild' | 'childEnded' | 'cancelChild', payload: Record<string, unknown>): AtomicWrite => ({
    collection: Collections.batchJobs,
    kind: 'insertOne',
    doc: { ...newBatchJob({ kind, ...tenant, payload, dueAt: now }, now) },
  })
  const writes: AtomicWrite[] = []
  const returned = new Set<string>()
  for (const effect of effects) {
    if (effect.kind === 'childReturned') returned.add(effect.child.processInstanceId)
    if (effect.kind !== 'childRequested') continue
    const payload: ChildJobPayload & { child: ChildRequest } = {
      processInstanceId: instance.processInstanceId,
      threadId: effect.threadId,
      childInstanceId: effect.child.processInstanceId,
      child: effect.child,
    }
    writes.push(job('startChild', { ...payload }))
  }
  const { ended } = changedWaits(previous, state, 'child', (thread) => thread.child.processInstanceId)
  for (const thread of ended) {
    if (returned.has(thread.child.processInstanceId)) continue
    const payload: ChildJobPayload = {
      processInstanceId: instance.processInstanceId,
      threadId: thread.threadId,
      childInstanceId: thread.child.processInstanceId,
    }
    writes.push(job('cancelChild', { ...payload }))
  }
  const parent = instance.parentInstance
  const endsNow = ENDED.has(instance.processStatus) && !(previous && ENDED.has(previous.processInstance.processStatus))
  if (parent && endsNow) {
    const payload: ChildJobPayload = {
      processInstanceId: parent.processInstanceId,
      threadId: parent.threadId,
      childInstanceId: instance.processInstanceId,
    }
    writes.push(job('childEnded', { ...payload }))
  }
  writes.push(...jobsDueOnResume(previous, state, 'childEnded', now))
  return writes
}

/** How a stored child ended, as its parent's step is told. */
export function childOutcome(child: StoredContext): ChildOutcome {
  const { processInstanceId, processStatus, output } = child.processInstance
  if (processStatus === 'completed') return { processInstanceId, status: 'completed', result: output ?? child.dataInstance }
  if (processStatus === 'cancelled') return { processInstanceId, status: 'cancelled' }
  const failed = child.processInstance.threads.find((thread) => thread.status === 'failed')
  return { processInstanceId, status: 'failed', ...(failed?.error ? { error: failed.error.message } : {}) }
}

export interface CallProcessDependencies extends MoveThreadDependencies {
  starter: ProcessStarter
  control: ProcessControl
}

/** The system, acting in the instance's tenant. */
function systemActor(stored: Pick<StoredContext, 'appId' | 'organizationId'>): Actor {
  return { ...SYSTEM_USER, organizationId: stored.organizationId, appId: stored.appId, isSystemUser: true }
}

function returnMove(threadId: string, outcome: ChildOutcome): ThreadMove {
  return {
    waitsFor: (thread) => thread.child?.processInstanceId === outcome.processInstanceId,
    move: (compiled, state, env) => compiled.returnFromChild(state, threadId, outcome, env),
    activity: (thread) => ({
      type: 'childReturned',
      stepId: thread.stepId,
      details: {
        threadId,
        childInstanceId: outcome.processInstanceId,
        status: outcome.status,
        ...(outcome.error === undefined ? {} : { error: outcome.error }),
      },
    }),
  }
}

/** A failure starting the child that no retry cures: the child's process, version or input is wrong. */
function refusedStart(error: unknown): string | undefined {
  if (!isServiceError(error) || error.statusCode >= 500) return undefined
  return `${error.code}: ${error.message}`
}

export function startChildHandler(deps: CallProcessDependencies): BatchJobHandler {
  return async (job, context) => {
    const { processInstanceId, threadId, childInstanceId } = childPayloadOf('startChild', job.payload)
    const request = job.payload.child as ChildRequest | undefined
    if (!request || typeof request.processId !== 'string')
      throw new PermanentJobError(`a startChild job needs its child: ${JSON.stringify(job.payload)}`)
    const parent = await deps.instances.find(processInstanceId)
    const waiting = parent?.processInstance.threads.find(
      (thread) => thread.threadId === threadId && thread.child?.processInstanceId === childInstanceId,
    )
    if (!parent || !waiting || waiting.status !== 'waiting') {
      context.log.debug('the parent no longer waits for the child: not started')
      return
    }
    try {
      await deps.starter.start({
        actor: null,
        appId: parent.appId,
        organizationId: parent.organizationId,
        processId: request.processId,
        modelVersion: request.version,
        input: request.input as JsonObject,
        // A system-started parent's child is started by the system too.
        ...(parent.initiator === SYSTEM_USER.userId ? {} : { initiatorUserId: parent.initiator }),
        lockFirstTask: false,
        processInstanceId: childInstanceId,
        parent: { processInstanceId, processId: parent.processId, threadId, depth: request.depth },
      })
    } catch (error) {
      const refused = refusedStart(error)
      if (refused === undefined) throw error
      // The child cannot start: the parent's step is told as if it had failed.
      await moveThreadForJob(
        deps,
        processInstanceId,
        threadId,
        context.now,
        returnMove(threadId, {
          processInstanceId: childInstanceId,
          status: 'failed',
          error: `it could not start: ${refused}`,
        }),
      )
    }
  }
}

export function childEndedHandler(deps: CallProcessDependencies): BatchJobHandler {
  return async (job, context) => {
    const { processInstanceId, threadId, childInstanceId } = childPayloadOf('childEnded', job.payload)
    const child = await deps.instances.find(childInstanceId)
    // A child retried after it failed runs again; its parent heard of the failure already.
    if (!child || !ENDED.has(child.processStatus)) return
    const outcome = await moveThreadForJob(deps, processInstanceId, threadId, context.now, returnMove(threadId, childOutcome(child)))
    context.log.debug({ outcome }, 'childEnded job ran')
  }
}

export function cancelChildHandler(deps: CallProcessDependencies): BatchJobHandler {
  return async (job) => {
    const { processInstanceId, childInstanceId } = childPayloadOf('cancelChild', job.payload)
    const child = await deps.instances.find(childInstanceId)
    if (!child || child.processStatus === 'completed' || child.processStatus === 'cancelled') return
    try {
      await deps.control.applyTo('cancel', systemActor(child), child, {
        reason: `its parent instance ${processInstanceId} no longer waits for it`,
      })
    } catch (error) {
      if (isServiceError(error) && error.code === 'wm3042')
        throw new Error(`child instance ${childInstanceId} changed while cancelling; trying again`, { cause: error })
      throw error
    }
  }
}
