/**
 * The store's collections and the shapes of the documents the gateway and the engine share. One
 * service writes, the other reads (models, users, constants, data collections, batch jobs, cache
 * invalidations), so the names and shapes live here once.
 */
import type { WorkflowModel } from '../engine/runtime/types.js'

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
} as const

/**
 * A stored model version. Every live insert adds a document (`live: true`, version + 1) and keeps
 * the earlier ones, since running instances keep theirs; `live: false` is the single draft of a
 * model id, which no instance uses. `processId` is set for process models (defaults to modelID).
 */
export interface StoredModel extends WorkflowModel {
  _id?: string
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

/** A constant, `_id` = `<appId>:<name>` (DESIGN.md §6). */
export interface StoredConstant {
  _id: string
  appId: string
  name: string
  value: string
  modelID: string
}

/** A business data collection declared by a `dataCollection` model. */
export interface StoredDataCollection {
  _id?: string
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
  kind: 'deploy' | 'scheduledRun'
  status: BatchJobStatus
  appId: string
  organizationId?: string
  /** deploy: the jobScheduler model id and version to deploy. scheduledRun: the schedule fired. */
  payload: Record<string, unknown>
  tryCount: number
  dueAt: Date
  createdAt: Date
  updatedAt: Date
  lastError?: string
  lastFailureAt?: Date
  leaseUntil?: Date
  leaseOwner?: string
}

/** Inserted by the cache-evict endpoint; every instance applies the ones newer than it has seen. */
export interface StoredCacheInvalidation {
  _id?: string
  /** `fm` (gateway), `wfm` (engine) or `all`. */
  target: 'fm' | 'wfm' | 'all'
  /** A cache type (`app`, `swagger`, `endpoint`, `service`) or `all`. */
  cacheType: string
  /** One cache key, or all entries of the type when absent. */
  id?: string
  /** Monotonic per store, so pollers can ask for what is newer than what they saw. */
  sequence: number
  createdAt: Date
}
