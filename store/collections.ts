/**
 * The store's collections and the shapes of the documents the gateway and the engine share. One
 * service writes, the other reads (models, users, constants, data collections, batch jobs, cache
 * invalidations), so the names and shapes live here once.
 */
import type { ActivityType, NotificationEventType, WebhookDeliveryStatus } from '../openapi/generated/schemas.js'
import type { DataInstance, InformItem, ProcessInstance, ProcessState, ProcessStatus, Task } from '../model/instance.js'
import type { WorkflowModel } from '../model/types.js'
import type { ColdRule } from './embedded/cold-tier.js'
import { isDataCollection } from './tenant.js'

export const Collections = {
  users: 'users',
  models: 'models',
  constants: 'constants',
  dataCollections: 'dataCollections',
  batchJobs: 'batchJobs',
  cacheInvalidations: 'cacheInvalidations',
  /** One document per process instance: `{ _id, processInstance, dataInstance, version, ... }`. */
  contexts: 'contexts',
  activities: 'activities',
  notifications: 'notifications',
  /** One document per locked task: `{ _id: taskId, processInstanceId, userId, expiresAt }`. */
  taskLocks: 'taskLocks',
  /** The deployed schedules of jobScheduler models, one document per schedule (StoredSchedule). */
  schedules: 'schedules',
  /** Named counters (StoredCounter): `cacheInvalidations` numbers the invalidation records. */
  counters: 'counters',
  /** Webhook subscriptions (StoredWebhookSubscription): the gateway writes them, the engine reads them. */
  webhookSubscriptions: 'webhookSubscriptions',
  /** The webhook outbox (StoredWebhookDelivery): written by the engine with the change, sent by its delivery worker. */
  webhookDeliveries: 'webhookDeliveries',
  /** Claimed idempotency keys of starts (StoredIdempotencyKey), removed by a TTL index. */
  idempotencyKeys: 'idempotencyKeys',
  /** External tasks waiting for workers (StoredExternalTask), written with the change that reaches their step. */
  externalTasks: 'externalTasks',
  /** The threads waiting at receive steps (StoredMessageSubscription), indexed by tenant, message and correlation key. */
  messageSubscriptions: 'messageSubscriptions',
  /** Messages that found no thread and were kept for their `ttl` (StoredBufferedMessage), removed by a TTL index. */
  bufferedMessages: 'bufferedMessages',
  /** The store's own records (StoredSchemaVersion): which layout of the collections the store has. */
  meta: 'meta',
} as const

/** The process statuses after which an instance does not change unless someone reopens it. */
export const ENDED_STATUSES: readonly ProcessStatus[] = ['completed', 'cancelled']

/**
 * The instances' indexes that only reads of unfinished instances use: their open tasks, the tasks'
 * due dates and escalations, their incidents, the running instances of a process. An instance that ends has its
 * tasks cancelled and every thread marked done (runtime/interpreter.ts `endProcess`), so the ended
 * ones need no entries in them (cold-tier.ts `hotOnlyIndexes`). Every read on them pins
 * `processStatus` to unfinished values: `overdue` and `running` in services/engine/queries/repository.ts,
 * `myTasks` and `incidents` in services/engine/queries/paged.ts, services/engine/operations/open-tasks.ts,
 * the escalations coming due in services/engine/instances/repository.ts `escalationsDueIn`.
 */
const UNFINISHED_INSTANCES_INDEXES = [
  'engine_overdue_tasks',
  'engine_task_inbox',
  'engine_incidents',
  'engine_running_instances',
  'engine_escalations_due',
]

/**
 * What the embedded store keeps in SQLite only (docs/performance.md#memory-the-embedded-stores-cold-tier): the
 * history, which grows without bound and is read rarely, one document at a time or by an index.
 * Ended instances and their notification records go cold once the change that ended them is durable
 * (and come back to memory if they are reopened); activity records are only ever added and read by
 * instance, so every one goes cold once durable, running instances' too. Everything else (running
 * instances, users, models, schedules, locks, jobs) stays in memory. Measured with
 * scripts/bench/scale.mjs (docs/performance.md#memory-the-embedded-stores-cold-tier).
 */
export const COLD_TIER: Readonly<Record<string, ColdRule>> = {
  [Collections.contexts]: { path: 'processStatus', values: ENDED_STATUSES, hotOnlyIndexes: UNFINISHED_INSTANCES_INDEXES },
  [Collections.notifications]: { path: 'processInstance.processStatus', values: ENDED_STATUSES },
  // ActivityRepository (services/engine/instances/activities.ts) gives every record a new ObjectId.
  [Collections.activities]: { always: true, freshIds: true },
}

/**
 * A tenant's data collection grows with what its processes record (a leave booking per approved
 * request) and is read by its flow functions through the indexes its model declares, so every
 * document of it is cold once durable: memory holds none of it but the writes in flight. Its
 * writers may choose their own ids, so inserts are looked up among the cold ones (through the filter
 * of cold ids, cold-ids.ts).
 */
const DATA_COLLECTION_RULE: ColdRule = { always: true }

/** The cold rule of a physical collection (COLD_TIER, or a tenant's data collection's), undefined for one kept wholly in memory. */
export function coldRuleOf(collection: string): ColdRule | undefined {
  if (Object.hasOwn(COLD_TIER, collection)) return COLD_TIER[collection]
  return isDataCollection(collection) ? DATA_COLLECTION_RULE : undefined
}

/**
 * A stored model version. Every live insert adds a document (`live: true`, version + 1) and keeps
 * the earlier ones, since running instances keep theirs; `live: false` is the single draft of a
 * model id, which no instance uses. `processId` is set for process models (defaults to modelID).
 */
export interface StoredModel extends Omit<WorkflowModel, 'organizationId'> {
  _id?: string
  /** With appId, the tenant the model belongs to (store/tenant.ts). */
  organizationId: string
  live: boolean
  processId?: string
}

export interface StoredUser {
  userId: string
  firstName?: string
  lastName?: string
  fullName: string
  /** Lower-cased fullName; a unique index on it makes the case-insensitive uniqueness race-free. */
  fullNameKey?: string
  unit: { id: string; name: string }
  roles: string[]
  email?: string
  swimlanes?: string[]
  isSystemUser?: boolean
  organizationId?: string
  appId?: string
}

/** A constant, `_id` = `<tenantKey>:<name>` (store/tenant.ts); the API names it `<appId>:<name>`. */
export interface StoredConstant {
  _id: string
  organizationId: string
  appId: string
  name: string
  value: string
  modelID: string
}

/** A business data collection declared by a `dataCollection` model. */
export interface StoredDataCollection {
  _id?: string
  organizationId: string
  appId: string
  /** The human-readable name (`modelBody.name`) clients search by. */
  name: string
  modelID: string
  /** The physical collection holding its documents. */
  collectionName: string
}

export type BatchJobStatus = 'waiting' | 'running' | 'retrying' | 'done' | 'failed'

export interface StoredBatchJob {
  _id?: string
  jobId: string
  kind:
    | 'deploy'
    | 'scheduledRun'
    | 'escalation'
    | 'bulkOperation'
    | 'historyRetention'
    | 'timer'
    | 'startChild'
    | 'childEnded'
    | 'cancelChild'
    | 'bufferedMessage'
  status: BatchJobStatus
  appId: string
  organizationId?: string
  /**
   * deploy: the jobScheduler model id and version to deploy. scheduledRun: the schedule fired.
   * escalation: the instance, task, model version and position of the escalation (EscalationPayload).
   * historyRetention: the time before which ended instances are removed (`{ endedBefore }`).
   * timer, startChild, childEnded, cancelChild, bufferedMessage: the instance and thread they move on
   * (services/engine/waits/, docs/reference/jobs.md#jobs-of-waiting-threads).
   */
  payload: Record<string, unknown>
  tryCount: number
  dueAt: Date
  createdAt: Date
  updatedAt: Date
  lastError?: string
  lastFailureAt?: Date
  leaseUntil?: Date
  leaseOwner?: string
  /**
   * scheduledRun: `<schedule _id>:<tickISO>`; historyRetention: `historyRetention:<hour>`. Unique, so
   * the engines that see the same tick insert one job between them. timer: `timer:<timerId>`, so the
   * change that ends the wait finds the job to remove.
   */
  scheduleKey?: string
  /** When the job became `done` or `failed`; it is removed once the retention window has passed. */
  finishedAt?: Date
  /** bulkOperation and historyRetention: how far it got (instances changed or removed, those that failed with their error). */
  progress?: BulkProgress
  /** bulkOperation only: the last instance id (in `_id` order) it has worked on; a rerun goes on after it. */
  cursor?: string
}

export interface BulkProgress {
  total: number
  done: number
  failed: Array<{ processInstanceId: string; error: string }>
}

/**
 * An idempotency key of a start, claimed (inserted, `_id` unique) before the instance is created:
 * `_id` = `<appId>:<organizationId>:<key>`. `answer` is set once the first request succeeded; a
 * claim without one is in progress until `claimedUntil`, after which a retry may take it over.
 */
export interface StoredIdempotencyKey {
  /** The key scoped to its caller (user, tenant, route): services/engine/lifecycle/idempotent-start.ts idempotencyKeyId. */
  _id: string
  /** SHA-256 of the route and the request body: the same key with another body is refused. */
  requestHash: string
  /** The instance the claim starts: a retry that takes the claim over starts the same one. */
  processInstanceId: string
  claimId: string
  claimedUntil: Date
  answer?: { statusCode: number; body: string }
  /** The TTL index removes the key at this time (IDEMPOTENCY_TTL_HOURS after the claim). */
  expiresAt: Date
}

/** What a schedule fires (a `jobScheduler` model's schedule, docs/reference/jobs.md#schedules): exactly one of the two. */
export type ScheduleAction =
  | { startProcess: { processId: string; input: Record<string, unknown>; initiatorUserId?: string } }
  | { runFunction: { functionId: string; inputParams?: Record<string, unknown> } }

/** A deployed schedule of a jobScheduler model; a deploy job writes, replaces and removes them. */
export type StoredSchedule = ScheduleAction & {
  /** `<tenantKey>:<modelID>:<scheduleId>` (store/tenant.ts). */
  _id: string
  appId: string
  organizationId: string
  modelID: string
  /** The model version that deployed it. */
  modelVersion: number
  scheduleId: string
  /** Cron with an optional leading seconds field. */
  cron: string
  /** IANA time zone the cron is read in; UTC when absent. */
  timezone?: string
  /**
   * The last tick fired, or when the schedule (or its cron or time zone) was deployed: only ticks
   * after it fire, and of those only the latest, so downtime leads to at most one catch-up run.
   */
  lastFiredAt: Date
  /**
   * The first tick after `lastFiredAt` (absent when the cron never fires again): engines look only
   * for schedules whose `nextTickAt` has come (indexed), not through every schedule on every poll.
   */
  nextTickAt?: Date
  createdAt: Date
  updatedAt: Date
}

/** A named counter, incremented atomically (`findOneAndUpdate` with `$inc`). */
export interface StoredCounter {
  _id: string
  value: number
}

/** Inserted by the cache-evict endpoint; every instance applies the ones newer than it has seen. */
export interface StoredCacheInvalidation {
  _id?: string
  /** `fm` (gateway), `wfm` (engine) or `all`. */
  target: 'fm' | 'wfm' | 'all'
  /** A cache type (`app`, `swagger`, `endpoint`, `service`) or `all`. */
  cacheType: string
  /** One cache key (an `app` cache's key is the tenant key, store/tenant.ts), or all entries of the type when absent. */
  id?: string
  /** Monotonic per store, so pollers can ask for what is newer than what they saw. */
  sequence: number
  createdAt: Date
}

/**
 * One process instance: its state plus top-level copies of the fields that queries filter and sort
 * on (kept in step with `processInstance` by every write). `version` grows by one on every write,
 * each of which is a compare-and-set on it.
 */
export interface StoredContext {
  /** The processInstanceId. */
  _id: string
  processInstance: ProcessInstance
  dataInstance: DataInstance
  version: number
  appId: string
  organizationId: string
  processId: string
  businessKey: string
  processStatus: ProcessStatus
  /** `processInstance.lastUpdate` as a Date, for range queries and sorting. */
  lastUpdate: Date
  initiator: string
  /** The earliest `dueDate` of the open tasks, null when none has one (the overdue-tasks query's index). */
  nextDueAt?: Date | null
  /** `processInstance.processStart` as a Date (the instances query's order). */
  startedAt?: Date
  /** How many tasks are open. */
  openTaskCount?: number
  /**
   * Whose inboxes the open tasks are in: `user:<userId>` of the assigned ones, `swimlane:<swimlane>`
   * of those in a swimlane's pool (store/context-fields.ts), for the my-tasks query.
   */
  inbox?: string[]
  /** The `createdAt` of the newest open task, null when none is open (the my-tasks order). */
  newestOpenTaskAt?: Date | null
  /** Whether a thread has failed (an incident). */
  hasIncident?: boolean
  /** When the newest failure of a failed thread happened, null without one (the incidents order). */
  newestIncidentAt?: Date | null
  /** Who may see the instance besides admins, as `user:` and `swimlane:` keys (store/context-fields.ts `viewersOf`). */
  viewers?: string[]
  /**
   * When each escalation of the open tasks that has not run falls due (services/engine/jobs/escalations/jobs.ts):
   * what the escalation promoter reads to store the jobs of those coming near. Derived with the model, so
   * written by the change through a commit hook; absent on instances stored before it existed.
   */
  escalationsDueAt?: Date[]
  /**
   * The notification record's own fields as of this version (store/notification-records.ts): the
   * event of the change and the model's inform list evaluated on it. Absent on instances an earlier
   * release stored and has not changed since: their record is the one stored in `notifications`.
   */
  notice?: StoredNotice
  /**
   * The activity records of the instance's latest changes, oldest first (store/activity-log.ts): each
   * change appends its own in its commit, and the oldest beyond ACTIVITY_LOG_LENGTH move to
   * `activities` in the same batch. Absent on instances an earlier release stored and has not changed
   * since: their records are all in `activities`.
   */
  activityLog?: ActivityLogEntry[]
}

/** What a change tells of itself in the instance's notification record. */
export interface StoredNotice {
  eventType: NotificationEventType
  informList: InformItem[]
  /**
   * `processInstance.lastUpdate` again: the records' order in the index that lists the views
   * (`engine_notification_records`), whose range then leaves out the instances without a notice.
   */
  lastUpdate: string
}

/** The fields of a stored instance that commit hooks derive (services/engine/instances/commit-hooks.ts `fieldsFor`). */
export type HookDerivedFields = Pick<StoredContext, 'escalationsDueAt' | 'notice'>

/** The fields a change stores besides the state and what is derived from it alone: the commit hooks' and the activity log. */
export type ChangeFields = HookDerivedFields & Pick<StoredContext, 'activityLog'>

/** A task lock (docs/reference/locks.md): held by `userId` until `expiresAt` (LOCK_TTL_SECONDS after it was taken or renewed). */
export interface StoredTaskLock {
  /** The taskId: one holder per task. */
  _id: string
  processInstanceId: string
  userId: string
  expiresAt: Date
}

/** One entry of a process instance's activity log. */
export interface StoredActivity {
  _id?: string
  processInstanceId: string
  /** ISO date-time; the log is read newest first. */
  timeStamp: string
  type: ActivityType
  /** null for actions without an acting user (headless calls, scheduled jobs). */
  userId: string | null
  userName?: string
  taskId?: string
  stepId?: string
  details?: Record<string, unknown>
}

/** An activity record kept in its instance's document (`activityLog`): the instance is the document's. */
export type ActivityLogEntry = Omit<StoredActivity, '_id' | 'processInstanceId'>

/**
 * The notification record of a process instance (one per instance). The engine's records are views
 * of the stored instances (store/notification-records.ts); the `notifications` collection holds the
 * records written apart from a change (the gateway's `POST /notify`, `POST /notify/send`) and those
 * an earlier release wrote with every change.
 */
export interface StoredNotification {
  /** `processInstance.processInstanceId`. */
  _id: string
  appId: string
  organizationId?: string
  eventType: NotificationEventType
  informList: InformItem[]
  processInstance: ProcessInstance
  /** true while a user task is open; `task` is then the newest open task. */
  onUs: boolean
  task?: Task
  /**
   * The `version` of the instance the record was written over: it is the instance's record until
   * the instance changes again. Absent on records of an earlier release and on records of ids the
   * engine does not know.
   */
  basis?: number
}

/** A webhook subscription of one tenant (docs/webhooks.md); `_id` is the subscriptionId. */
export interface StoredWebhookSubscription {
  _id: string
  organizationId: string
  appId: string
  url: string
  events: NotificationEventType[]
  /** Empty: every process of the app. */
  processIds: string[]
  /** The HMAC-SHA256 key deliveries are signed with. */
  secret: string
  createdAt: Date
}

/**
 * One event to deliver to one subscription: the outbox record, inserted in the same atomic batch as
 * the change that caused it, so a crash can delay a delivery but never lose it. `_id` is the
 * deliveryId, sent on every try.
 */
export interface StoredWebhookDelivery {
  _id: string
  subscriptionId: string
  organizationId: string
  appId: string
  processId: string
  processInstanceId: string
  eventType: NotificationEventType
  /** `<subscriptionId> <processInstanceId>`: the deliveries that go out one after another. */
  orderKey: string
  /** The instance version the change wrote: the order of the deliveries of one orderKey. */
  sequence: number
  /** The JSON body, fixed at the change, so every try sends the same bytes. */
  body: string
  status: WebhookDeliveryStatus
  /** Tries made so far. */
  tries: number
  /** When it may be tried next (`pending` only). */
  dueAt: Date
  createdAt: Date
  deliveredAt?: Date
  lastStatusCode?: number
  lastError?: string
  /** While `delivering`: the engine trying it, and until when its claim holds. */
  leaseOwner?: string
  leaseUntil?: Date
}

/**
 * A thread waiting at a receive step, written and removed with the change that makes it wait or
 * go on (services/engine/waits/messages/), so correlating is one indexed lookup. `_id` is the
 * thread's `message.subscriptionId`.
 */
export interface StoredMessageSubscription {
  _id: string
  organizationId: string
  appId: string
  messageName: string
  correlationKey: string
  processId: string
  processInstanceId: string
  threadId: string
  stepId: string
  createdAt: Date
}

/** A message no thread waited for, kept until `expiresAt` (its `ttl`) for the first thread that arrives for it. */
export interface StoredBufferedMessage {
  _id: string
  organizationId: string
  appId: string
  messageName: string
  correlationKey: string
  /** Only for an instance of this process, when the sender named one. */
  processId?: string
  variables: Record<string, unknown>
  createdAt: Date
  expiresAt: Date
  /** The subscription that took it; set in the same atomic batch as the delivery. */
  consumedBy?: string
}

/**
 * The store's schema version (`_id` `storeSchema`, store/schema): absent in a store written before
 * versions were recorded (version 1). While a migration runs, the service running it holds the lease.
 */
export interface StoredSchemaVersion {
  _id: 'storeSchema'
  version?: number
  migrationOwner?: string
  migrationLeaseUntil?: Date
}

/**
 * An external task (docs/reference/external-tasks.md): `_id` is the externalTaskId. Inserted in the
 * same atomic batch as the change whose thread reached the `externalTask` step, removed with the
 * change that ends the wait (completed, failed for good, cancelled, moved). `availableAt` is when it
 * may be handed out next: its creation or return, the end of its lock while locked, the end of a
 * failure's retry timeout; a lock is taken by a conditional update on it.
 */
export interface StoredExternalTask {
  _id: string
  organizationId: string
  appId: string
  processInstanceId: string
  processId: string
  businessKey: string
  threadId: string
  stepId: string
  topic: string
  input: unknown
  retries: number
  createdAt: Date
  availableAt: Date
  /** True while its instance is suspended: not handed out until it is resumed. */
  suspended: boolean
  /** The worker holding it (or who held it last, until another takes it) and until when. */
  workerId?: string
  lockExpiresAt?: Date
  /** The message of the last failure a worker reported. */
  errorMessage?: string
  /** The instance's version stored with the task. */
  instanceVersion: number
  /** `onError: "rollback"` only: the state before the change that reached the step, restored by a final failure. */
  rollbackState?: ProcessState
}
