/**
 * The steps where a thread waits for time or the world (docs/models.md#timer, #receive,
 * #callprocess): arriving records on the thread what it waits for (the engine stores the timer's
 * job, the message subscription or the child's start from that, instances/commit-hooks.ts), and
 * the `move` of each event takes the thread off its wait. The engine calls the moves from a batch
 * job or a request, on a state it read; each checks that the thread still waits for exactly that
 * event, so a repeated event changes nothing.
 */
import { afterDuration } from '../model/duration.js'
import { assignAtPath, defineOwn, parseAssignmentPath } from '../model/paths.js'
import type { TransitionInProgress } from './interpreter.js'
import {
  type CallProcessStep,
  type ChildOutcome,
  type JsonObject,
  type ReceiveStep,
  RuntimeError,
  type RunEnvironment,
  type StepDefinition,
  type Thread,
  type TimerStep,
} from './types.js'

/** How deep instances may start one another (docs/models.md#callprocess). */
export const MAX_CALL_DEPTH = 10

function isRecord(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** The date-time an expression gave (`steps.<id>.<field>` names it in the error). */
export function dateTimeOf(value: unknown, location: string): Date {
  const date = typeof value === 'string' || typeof value === 'number' ? new Date(value) : new Date(Number.NaN)
  if (Number.isNaN(date.getTime()))
    throw new RuntimeError('technical', `${location} must give a date-time, not ${JSON.stringify(value ?? null)}`)
  return date
}

/** A timer step: waits until `dueAt` (its duration from now, or the date its `until` gave). */
export function arriveAtTimer(thread: Thread, step: TimerStep, until: Date | undefined, env: RunEnvironment): void {
  const dueAt = step.duration !== undefined ? afterDuration(env.now(), step.duration) : until
  if (!dueAt) throw new RuntimeError('technical', `steps.${thread.stepId} has neither duration nor until`)
  thread.timer = { timerId: env.newId(), dueAt: dueAt.toISOString() }
  thread.status = 'waiting'
}

/** A receive step: waits for `message` with the correlation key computed now, and for its timeout. */
export function arriveAtReceive(thread: Thread, step: ReceiveStep, correlationKey: unknown, env: RunEnvironment): void {
  if (
    correlationKey === undefined ||
    correlationKey === null ||
    correlationKey === '' ||
    isRecord(correlationKey) ||
    Array.isArray(correlationKey)
  ) {
    throw new RuntimeError(
      'technical',
      `steps.${thread.stepId}.correlate must give a string or a number, not ${JSON.stringify(correlationKey ?? null)}`,
    )
  }
  thread.message = { messageName: step.message, correlationKey: String(correlationKey), subscriptionId: env.newId() }
  if (step.timeout) thread.timer = { timerId: env.newId(), dueAt: afterDuration(env.now(), step.timeout.after).toISOString() }
  thread.status = 'waiting'
}

/**
 * A callProcess step: asks the engine to start the child (the `childRequested` effect) and waits
 * for it. Past MAX_CALL_DEPTH the thread fails instead (`failThread`), so a model that calls itself
 * stops there.
 */
export function arriveAtCallProcess(
  thread: Thread,
  step: CallProcessStep,
  input: unknown,
  transition: TransitionInProgress,
  env: RunEnvironment,
  failThread: (thread: Thread, error: { message: string; code?: string }) => void,
): void {
  const instance = transition.instance
  const depth = (instance.parentInstance?.depth ?? 0) + 1
  if (depth > MAX_CALL_DEPTH) {
    failThread(thread, {
      message: `steps.${thread.stepId}: callProcess would start an instance ${depth} levels deep; at most ${MAX_CALL_DEPTH} may nest`,
      code: 'callDepth',
    })
    return
  }
  if (!isRecord(input))
    throw new RuntimeError('technical', `steps.${thread.stepId}.input must give an object, not ${JSON.stringify(input ?? null)}`)
  const processInstanceId = env.newInstanceId()
  thread.child = { processInstanceId, processId: step.processId }
  thread.status = 'waiting'
  instance.childInstances = [
    ...(instance.childInstances ?? []),
    { processInstanceId, processId: step.processId, stepId: thread.stepId, threadId: thread.threadId, startedAt: env.now().toISOString() },
  ]
  transition.effects.push({
    kind: 'childRequested',
    threadId: thread.threadId,
    stepId: thread.stepId,
    child: { processInstanceId, processId: step.processId, ...(step.version === undefined ? {} : { version: step.version }), input, depth },
  })
}

/** The thread `threadId` of the transition, which must be waiting (a conflict otherwise: the event came too late). */
export function waitingThread(transition: TransitionInProgress, threadId: string): Thread {
  const thread = transition.instance.threads.find((candidate) => candidate.threadId === threadId)
  if (!thread || thread.status !== 'waiting') throw new RuntimeError('conflict', `thread ${threadId} is not waiting`, { target: 'thread' })
  return thread
}

function leaveWait(thread: Thread, next: string): void {
  delete thread.timer
  delete thread.message
  delete thread.child
  thread.stepId = next
  thread.status = 'active'
}

/** The timer fired: a timer step goes to `next`, a receive step to `timeout.next`. */
export function moveOnTimer(transition: TransitionInProgress, thread: Thread, step: StepDefinition | undefined, timerId: string): void {
  const timer = thread.timer
  if (timer?.timerId !== timerId)
    throw new RuntimeError('conflict', `thread ${thread.threadId} waits for no timer ${timerId}`, { target: 'thread' })
  let next: string
  if (step?.type === 'timer') next = step.next
  else if (step?.type === 'receive' && step.timeout) next = step.timeout.next
  else throw new RuntimeError('technical', `step ${thread.stepId} has no timer`)
  transition.effects.push({ kind: 'timerFired', threadId: thread.threadId, stepId: thread.stepId, timerId, dueAt: timer.dueAt })
  leaveWait(thread, next)
}

/** `value` written at `as` (`data.x.y`); merged with the object there when `merge`; without `as`, an object is merged into the root. */
function place(transition: TransitionInProgress, as: string | undefined, value: unknown, merge: boolean, location: string): void {
  if (as === undefined || as === 'data') {
    if (!isRecord(value)) return
    for (const [key, member] of Object.entries(value)) defineOwn(transition.data, key, member)
    return
  }
  const path = parseAssignmentPath(as, location)
  let existing: unknown = transition.data
  for (const key of path.keys) existing = isRecord(existing) && Object.hasOwn(existing, key) ? existing[key] : undefined
  const placed = merge && isRecord(existing) && isRecord(value) ? { ...existing, ...value } : value
  assignAtPath({ data: transition.data, output: {}, vars: {} }, path, placed)
}

/** The message arrived: its variables merged at `as`, the thread goes to `next`. */
export function moveOnMessage(
  transition: TransitionInProgress,
  thread: Thread,
  step: StepDefinition | undefined,
  subscriptionId: string,
  variables: JsonObject,
): void {
  const message = thread.message
  if (message?.subscriptionId !== subscriptionId || step?.type !== 'receive') {
    throw new RuntimeError('conflict', `thread ${thread.threadId} waits for no message ${subscriptionId}`, { target: 'thread' })
  }
  place(transition, step.as, variables, true, `steps.${thread.stepId}.as`)
  transition.effects.push({
    kind: 'messageReceived',
    threadId: thread.threadId,
    stepId: thread.stepId,
    messageName: message.messageName,
    correlationKey: message.correlationKey,
  })
  leaveWait(thread, step.next)
}

/**
 * The child ended: completed, its result lands at `as` and the thread goes on; failed or cancelled,
 * the thread fails (an incident `retry` starts a new child for), or goes on with
 * `onChildFailure: "continue"`. Answers whether the thread goes on.
 */
export function moveOnChild(
  transition: TransitionInProgress,
  thread: Thread,
  step: StepDefinition | undefined,
  outcome: ChildOutcome,
  failThread: (thread: Thread, error: { message: string; code?: string }) => void,
): boolean {
  if (thread.child?.processInstanceId !== outcome.processInstanceId || step?.type !== 'callProcess') {
    throw new RuntimeError('conflict', `thread ${thread.threadId} waits for no child ${outcome.processInstanceId}`, { target: 'thread' })
  }
  transition.effects.push({ kind: 'childReturned', threadId: thread.threadId, stepId: thread.stepId, child: outcome })
  if (outcome.status === 'completed') {
    place(transition, step.as, outcome.result, false, `steps.${thread.stepId}.as`)
    leaveWait(thread, step.next)
    return true
  }
  if (step.onChildFailure === 'continue') {
    leaveWait(thread, step.next)
    return true
  }
  delete thread.child
  const ended = outcome.status === 'failed' ? 'failed' : 'was cancelled'
  failThread(thread, {
    message:
      `child instance ${outcome.processInstanceId} of process ${step.processId} ${ended}` +
      (outcome.error === undefined ? '' : `: ${outcome.error}`),
    code: outcome.status === 'failed' ? 'childFailed' : 'childCancelled',
  })
  return false
}
