/**
 * The seam between the workflow runtime (interpreter + flow-function evaluator: plain objects in,
 * plain objects out, no HTTP, no storage) and the engine's domains that persist and serve it.
 *
 * The runtime takes a process state plus an event (start, complete, function action, retry,
 * change step) and gives back the new state plus effects (tasks created/ended, threads failed,
 * the process ended, info messages). Everything it needs from the outside world (constants,
 * outbound HTTP, business data collections, function look-up, ids, the clock) comes through a
 * RunEnvironment, so tests drive it with plain objects.
 */

import type {
  JsonObject,
  SwimlaneDefinition,
  StepDefinition,
  FlowFunctionDefinition,
  ProcessModelBody,
  WorkflowModel,
} from '../model/types.js'
import type { ProcessStatus, Task, Thread, ProcessInstance, DataInstance, ProcessState, InformItem, ParentLink } from '../model/instance.js'
import type { CompiledFunction } from './flow/compile.js'

export type * from '../model/types.js'
export type * from '../model/instance.js'
export { RuntimeError, type RuntimeErrorKind } from '../model/errors.js'

// ---------------------------------------------------------------- environment (the runtime's ports)

/** The acting user, as flow expressions see it (`user` in the store). */
export interface RuntimeUser {
  userId: string
  fullName: string
  roles: string[]
  swimlanes: string[]
  unit?: { id: string; name: string }
}

export interface HttpRequest {
  method: string
  url: string
  headers: Record<string, string>
  body?: unknown
  timeoutMs: number
  /**
   * Sent as the `idempotency-key` header: the same for the same instance, stored revision, step,
   * node and occurrence, so a receiver can drop the repeat when a rolled-back step runs again.
   */
  idempotencyKey?: string
}

export interface HttpResponse {
  status: number
  headers: Record<string, string>
  body: unknown
}

export interface DataOperation {
  operation: 'insert' | 'update' | 'find' | 'delete'
  /** The data collection's human-readable name (dataCollection model `name`). */
  collection: string
  doc?: unknown
  filter?: unknown
  set?: unknown
  upsert?: boolean
}

/** Effects a flow function may need, provided by the engine (store, undici, models). */
export interface FlowHost {
  /** A constant of the app (`$constant(name)`), undefined when absent. */
  constant(name: string): Promise<string | undefined>
  /** Outbound HTTP; the engine adds the request's `additionalheaders`. */
  http(request: HttpRequest): Promise<HttpResponse>
  /** Business data collections. */
  data(operation: DataOperation): Promise<unknown>
  /** App-wide functions (`functions` models); a process's own functions are looked up first by the runtime. */
  appFunction(functionId: string): FlowFunctionDefinition | undefined
  /** Resolves a user id to a user record of the tenant (assignTo expressions, getUser fallback). */
  findUser(userId: string): Promise<RuntimeUser | null>
}

export interface RunLimits {
  /** Wall-clock limit of one function run (FLOW_TIMEOUT_MS, default 10000). */
  timeoutMs: number
  /**
   * Thread time a function may hold the engine's thread before it moves to the worker pool
   * (FLOW_INLINE_BUDGET_MS, default 20); 0 runs every function in the pool.
   */
  inlineBudgetMs: number
  /** JSONata nodes one model expression (switch case, assignTo, businessKey, inform) may evaluate on the engine's thread. */
  expressionNodes: number
  /** Flow nodes executed per run. */
  maxSteps: number
  /** Nested `call` depth. */
  maxCallDepth: number
  /** Automatic steps executed in one advance (guards against model loops). */
  maxAutomaticSteps: number
}

/**
 * The request's pending `data` writes, which the engine stores with the instance or not at all:
 * a function step that fails with `onError: "fail"` discards the writes it made.
 */
export interface Savepoints {
  /** Marks the writes made so far. */
  mark(): number
  /** Forgets the writes made since `mark`. */
  discardSince(mark: number): void
}

/** The read-only `process` of a flow function's store. */
export type ProcessView = Readonly<Pick<ProcessInstance, 'processInstanceId' | 'processId' | 'businessKey' | 'processStatus' | 'initiator'>>

/** What one flow-function run works on. */
export interface FunctionRunRequest {
  input: unknown
  /** The process dataInstance (copied, not changed); absent for a standalone run. */
  data?: DataInstance
  process?: ProcessView
  task?: Task
  /** Identifies this run of a step (instance, stored revision, step) for `idempotency-key`s; absent, each run is new. */
  idempotencyScope?: string
  /** Time an earlier attempt of this run already took (it moved from the engine's thread to the pool). */
  spentMs?: number
}

/** A flow-function run as plain data, so it can be handed to another thread. */
export interface IsolatedRun {
  functionId: string
  definition: FlowFunctionDefinition
  request: FunctionRunRequest
}

/** Finds a function by id for a `call` node: the process's own first, then the app's. */
export type FunctionResolver = (functionId: string) => CompiledFunction | undefined | Promise<CompiledFunction | undefined>

/**
 * Where the interpreter has a flow function run. Without one, the runtime runs it on the caller's
 * thread (`inlineRunner`, runtime/flow/execute.ts: runtime tests, the pool's worker itself). The
 * engine gives one that tries a run on its thread within an inline budget (`executeInline`'s
 * `inlineBudgetMs`, which stops the run with an InlineRunInterrupt) and moves it to its worker pool
 * (services/engine/flow-host/isolation/inline-first.ts).
 */
export interface FunctionRunner {
  run(fn: CompiledFunction, request: FunctionRunRequest, env: RunEnvironment, resolve: FunctionResolver): Promise<FunctionRunResult>
}

/**
 * Where flow functions (tenants' code) run so that they cannot stall the engine: the engine gives
 * a worker pool whose runs are stopped at the time limit however they spin. `resolve` gives the
 * definition of a function a `call` node names; host calls go to `env.host`.
 */
export interface FunctionIsolation {
  run(
    run: IsolatedRun,
    env: RunEnvironment,
    resolve: (functionId: string) => Promise<FlowFunctionDefinition | undefined>,
  ): Promise<FunctionRunResult>
}

/** How a top-level flow-function run ended: `business` a `fail` node or invalid input, `timeout` its time limit. */
export type FunctionRunOutcome = 'ok' | 'business' | 'technical' | 'timeout'

/** Told how each flow-function run the engine asked for went (its metrics); nested `call`s are part of their caller. */
export interface RunObserver {
  functionRan(functionId: string, outcome: FunctionRunOutcome, seconds: number): void
}

export interface RunEnvironment {
  actor: RuntimeUser
  host: FlowHost
  /** Absent where nothing holds writes back (runtime tests with plain objects). */
  savepoints?: Savepoints
  limits: RunLimits
  /** Runs flow functions; absent, they run inline (runtime tests, the worker itself). */
  functionRunner?: FunctionRunner
  /** Checks a large input against its schema away from the caller's thread (flow/input-check.ts); absent, here. */
  isolation?: FunctionIsolation
  /** The clock, so tests control time. */
  now(): Date
  /** Id generator (UUIDs in production), so tests get stable ids. */
  newId(): string
  /** A new process instance's id: time-ordered in production (lib/instance-id.ts), so tests get stable ids. */
  newInstanceId(): string
  /** Absent, nothing is measured. */
  observer?: RunObserver
}

// ---------------------------------------------------------------- effects (what the engine persists or announces)

/** An external task a thread now waits for (docs/reference/external-tasks.md): what the engine stores for workers. */
export interface ExternalTaskCreated {
  externalTaskId: string
  threadId: string
  stepId: string
  topic: string
  /** The step's `input` evaluated (the dataInstance when it has none). */
  input: unknown
  retries: number
}

export type RuntimeEffect =
  | { kind: 'taskCreated'; task: Task }
  | { kind: 'externalTaskCreated'; externalTask: ExternalTaskCreated }
  | { kind: 'taskEnded'; task: Task }
  | { kind: 'taskCancelled'; task: Task }
  | { kind: 'threadFailed'; thread: Thread }
  | { kind: 'processEnded'; status: 'completed' | 'cancelled' }
  | { kind: 'timerFired'; threadId: string; stepId: string; timerId: string; dueAt: string }
  | { kind: 'messageReceived'; threadId: string; stepId: string; messageName: string; correlationKey: string }
  | { kind: 'childRequested'; threadId: string; stepId: string; child: ChildRequest }
  | { kind: 'childReturned'; threadId: string; stepId: string; child: ChildOutcome }

/** A child instance a `callProcess` step asks the engine to start (docs/models.md#callprocess). */
export interface ChildRequest {
  processInstanceId: string
  processId: string
  version?: number
  input: JsonObject
  /** The child's depth: 1 under a top-level instance. */
  depth: number
}

/** How a child instance ended, as its parent's `callProcess` step is told. */
export interface ChildOutcome {
  processInstanceId: string
  status: 'completed' | 'failed' | 'cancelled'
  /** The child's end step `output`, else its final dataInstance (completed only). */
  result?: unknown
  /** Why it failed, or could not start. */
  error?: string
}

export interface Transition {
  state: ProcessState
  effects: RuntimeEffect[]
  /** Messages from `info` nodes, in order. */
  infoList: string[]
}

export interface FunctionRunResult {
  /** The dataInstance after the run (the input state's, changed by `data.*` assignments). */
  dataInstance: DataInstance
  output: JsonObject
  infoList: string[]
}

// ---------------------------------------------------------------- the runtime's entry points

export interface StartRequest {
  /** Already validated against the model's input schema (CompiledProcess.validateInput). */
  input: JsonObject
  processInstanceId: string
  appId: string
  organizationId: string
  initiator: RuntimeUser
  /** Overrides the model's businessKey expression. */
  businessKey?: string
  /** The instance whose `callProcess` step starts this one. */
  parent?: ParentLink
}

export interface ActRequest {
  taskId: string
  actionType: 'complete' | 'cancel' | 'return'
  customType?: string
  /** The form data; replaces the dataInstance before the action runs. */
  dataInstance?: DataInstance
}

export interface ActionFunctionRequest {
  taskId: string
  customType?: string
  /** The form data from the request (not from storage): the function's `input` and `data`. */
  dataInstance: DataInstance
}

export interface FunctionRequest {
  /** The process context, or null for a standalone run (no `data`, `process`, `task`). */
  state: ProcessState | null
  input: JsonObject
  taskId?: string
}

/**
 * A process model version compiled once (the engine's `app` cache holds these per app); its
 * methods never mutate the state they are given: they return a new one.
 */
export interface CompiledProcess {
  readonly model: WorkflowModel<ProcessModelBody>
  readonly processId: string
  readonly processName: string
  readonly swimlanes: Readonly<Record<string, SwimlaneDefinition>>
  /**
   * Messages describing why `input` fails the model's input schema; empty when it is valid. With an
   * environment, a large input is checked in its worker pool (flow/input-check.ts).
   */
  validateInput(input: unknown, env?: RunEnvironment): Promise<string[]>
  step(stepId: string): StepDefinition | undefined
  namedFunction(name: 'userTaskActivity' | 'getUser'): string | undefined
  fileFunction(kind: 'upload' | 'download' | 'delete'): string | undefined
  /** Creates the instance, resolves the businessKey, runs until every thread waits. */
  start(request: StartRequest, env: RunEnvironment): Promise<Transition>
  /** complete / cancel / return a task, run the action's function, advance. */
  act(state: ProcessState, request: ActRequest, env: RunEnvironment): Promise<Transition>
  /** A `function` action (chosen by customType): runs on the given form data; the task stays open. */
  runActionFunction(state: ProcessState, request: ActionFunctionRequest, env: RunEnvironment): Promise<Transition & { output: JsonObject }>
  /** Any function by id: the process's own first, then the app's (host.appFunction). */
  runFunction(functionId: string, request: FunctionRequest, env: RunEnvironment): Promise<FunctionRunResult>
  /**
   * Runs escalation `position` of an open task's step that keeps the task open (notify,
   * assignToSwimlane, assignToUser) and records it in the task's `escalated`.
   */
  escalate(state: ProcessState, taskId: string, position: number, env: RunEnvironment): Promise<Transition>
  /**
   * A worker completed the external task the thread waits for: its output goes to the step's `as`
   * (or is merged into the dataInstance), and the thread goes on to `next`.
   */
  completeExternalTask(state: ProcessState, externalTaskId: string, output: unknown, env: RunEnvironment): Promise<Transition>
  /** The external task failed with no retries left: its thread fails with the worker's message (an incident `retry` re-runs). */
  failExternalTask(state: ProcessState, externalTaskId: string, errorMessage: string, env: RunEnvironment): Promise<Transition>
  /** A waiting thread's timer (`timerId`) fired: a timer step goes on to `next`, a receive step to its `timeout.next`. */
  fireTimer(state: ProcessState, threadId: string, timerId: string, env: RunEnvironment): Promise<Transition>
  /** The message a receive step waits for (`subscriptionId`) arrived: its variables land at `as`, the thread goes on. */
  deliverMessage(
    state: ProcessState,
    threadId: string,
    subscriptionId: string,
    variables: JsonObject,
    env: RunEnvironment,
  ): Promise<Transition>
  /** The child a callProcess step waits for ended (or could not start). */
  returnFromChild(state: ProcessState, threadId: string, outcome: ChildOutcome, env: RunEnvironment): Promise<Transition>
  /** Re-runs a failed thread's step and continues. */
  retry(state: ProcessState, threadId: string, env: RunEnvironment): Promise<Transition>
  /** Forces the process to a step: open tasks cancelled, threads reset, then runs until it waits. */
  changeStep(
    state: ProcessState,
    stepId: string,
    request: { dataInstance?: DataInstance; status?: ProcessStatus },
    env: RunEnvironment,
  ): Promise<Transition>
  /** The model's `inform` evaluated into a notification's informList. */
  inform(state: ProcessState, env: RunEnvironment): Promise<InformItem[]>
}
