/**
 * The workflow model (docs/models.md): what a tenant deploys — process models, their steps, actions,
 * swimlanes, inform items and flow functions — as plain types. The validator (validation.ts), the
 * runtime and the gateway all read models through these.
 */

export type JsonObject = Record<string, unknown>
export type JsonSchema = JsonObject

export interface SwimlaneDefinition {
  name: string
  description?: string
}

export interface InformDefinition {
  key?: string
  label?: string
  /** JSONata expression over the store. */
  header: string
  display?: boolean
}

export type ActionType = 'complete' | 'cancel' | 'return' | 'function'

export interface ActionDefinition {
  actionType: ActionType
  customType?: string
  next?: string
  function?: string
}

export interface UserTaskStep {
  type: 'userTask'
  name: string
  swimlane: string
  /** 'initiator', 'swimlane' (default) or a JSONata expression giving a userId. */
  assignTo?: string
  form?: string
  preForms?: string[]
  actions: ActionDefinition[]
  taskFunctions?: string[]
  /** An ISO-8601 duration (`P3D`): the task is due that long after it is created. Not with `dueDate`. */
  dueIn?: string
  /** An expression giving the task's due date-time, evaluated when it is created. Not with `dueIn`. */
  dueDate?: string
  /** What happens to the task when it stays open too long, each once, in the order given. */
  escalations?: EscalationDefinition[]
}

export type EscalationKind = 'notify' | 'assignToSwimlane' | 'assignToUser' | 'action'

/**
 * One escalation of a user task: `after` (an ISO-8601 duration from the task's creation) it sends
 * an `Escalated` notification, moves the task to `swimlane`'s pool, assigns it to the user the
 * `userId` expression gives, or ends it with `actionType` (default `complete`) as the system.
 */
export interface EscalationDefinition {
  after: string
  do: EscalationKind
  swimlane?: string
  userId?: string
  actionType?: Exclude<ActionType, 'function'>
  note?: string
}

export interface FunctionStep {
  type: 'function'
  function: string
  next: string
  onError?: 'rollback' | 'fail'
}

export interface SwitchStep {
  type: 'switch'
  cases: Array<{ when: string; next: string }>
  default: string
}

export interface ParallelStep {
  type: 'parallel'
  branches: string[]
  join: string
}

export interface JoinStep {
  type: 'join'
  next: string
}

export interface EndStep {
  type: 'end'
  status?: 'completed' | 'cancelled'
  /** An expression giving what a parent's `callProcess` receives (default: the final dataInstance). */
  output?: string
}

/**
 * Work handed to a worker outside the service (docs/reference/external-tasks.md): an external task on
 * `topic` with the evaluated `input` (the dataInstance when absent); the thread waits until a worker
 * completes it, its output written at `as` (a `data.` path) or merged into the dataInstance.
 */
export interface ExternalTaskStep {
  type: 'externalTask'
  topic: string
  input?: string
  as?: string
  /** The task's retries when created (default 3). */
  retries?: number
  next: string
  /** When a failure leaves no retries: `fail` (default) fails the thread, `rollback` restores the state before the step was reached. */
  onError?: 'fail' | 'rollback'
}

/** Waits `duration` (ISO-8601) or `until` the date-time an expression gives, then goes on to `next`. */
export interface TimerStep {
  type: 'timer'
  duration?: string
  until?: string
  next: string
}

/** Waits for the message `message` whose correlation key is what `correlate` gave (default: the businessKey). */
export interface ReceiveStep {
  type: 'receive'
  message: string
  correlate?: string
  /** Where the message's variables are merged (`data.payment`); the dataInstance's root when absent. */
  as?: string
  next: string
  timeout?: { after: string; next: string }
}

/** Starts an instance of `processId` (same tenant) with `input`'s value as its data and waits until it ends. */
export interface CallProcessStep {
  type: 'callProcess'
  processId: string
  version?: number
  input: string
  as?: string
  next: string
  onChildFailure?: 'fail' | 'continue'
}

export type StepDefinition =
  | UserTaskStep
  | FunctionStep
  | SwitchStep
  | ParallelStep
  | JoinStep
  | EndStep
  | TimerStep
  | ReceiveStep
  | CallProcessStep
  | ExternalTaskStep

export type FlowNode =
  | { set: Record<string, string> }
  | { if: string; then?: FlowNode[]; else?: FlowNode[] }
  | { http: { method: string; url: string; headers?: string; body?: string; timeoutMs?: number }; as?: string }
  | { call: string; input?: string; as?: string }
  | {
      data: 'insert' | 'update' | 'find' | 'delete'
      collection: string
      doc?: string
      filter?: string
      set?: string
      upsert?: string
      as?: string
    }
  | { info: string }
  | { fail: string; code?: string }

export interface FlowFunctionDefinition {
  input?: JsonSchema
  output?: JsonSchema
  steps: FlowNode[]
}

export interface ProcessModelBody {
  processId?: string
  name?: string
  input?: JsonSchema
  businessKey?: string
  swimlanes?: Record<string, SwimlaneDefinition>
  inform?: InformDefinition[]
  start: string
  steps: Record<string, StepDefinition>
  functions?: Record<string, FlowFunctionDefinition>
  namedFunctions?: { userTaskActivity?: string; getUser?: string }
  fileUploadFunction?: string
  fileDownloadFunction?: string
  fileDeleteFunction?: string
}

/** The body of a `dataCollection` model: the collection's name in its app, and the indexes built on its documents. */
export interface DataCollectionModelBody {
  name: string
  indexes?: Array<{ keys: Record<string, 1 | -1>; unique?: boolean }>
}

/** A stored model as the gateway's insertModel keeps it (IModelForWorkflow). */
export interface WorkflowModel<Body = unknown> {
  modelID: string
  type: 'process' | 'form' | 'settings' | 'constants' | 'functions' | 'dataCollection' | 'jobScheduler'
  appId: string
  organizationId?: string
  name?: string
  version: number
  updateDate: string
  modelBody: Body
}
