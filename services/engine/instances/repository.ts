/**
 * The `contexts` collection: one document per process instance (its state, a version, and top-level
 * copies of the fields queries filter and sort on). Every write after the insert is a
 * compare-and-set on the version, so two writers that read the same version cannot both win and no
 * update is ever lost.
 */
import { repositoryPlugin } from '../../../plugins/store/repository-plugin.js'
import { type AtomicWrite, type Collection, type Filter, isUnmatchedWriteError, type Store } from '../../../store/port.js'
import { type ChangeFields, Collections, ENDED_STATUSES, type StoredContext } from '../../../store/collections.js'
import { queryFields } from '../../../store/context-fields.js'
import { type Tenant, tenantFilter } from '../../../store/tenant.js'
import type { ProcessState } from '../../../runtime/types.js'

declare module 'fastify' {
  interface FastifyInstance {
    contexts: ContextRepository
  }
}

/**
 * The document's fields (everything but `_id` and `version`): those derived from the state, then the
 * change's own. One literal, the named fields first: a document built by copying another and adding
 * fields to the copy costs several times as much on Node 20's V8 (lib/with-fields.ts).
 */
function documentFields(state: ProcessState, changeFields: ChangeFields): Omit<StoredContext, '_id' | 'version'> {
  const { processInstance, dataInstance } = state
  return {
    processInstance,
    dataInstance,
    appId: processInstance.appId,
    organizationId: processInstance.organizationId,
    processId: processInstance.processId,
    businessKey: processInstance.businessKey,
    processStatus: processInstance.processStatus,
    lastUpdate: new Date(processInstance.lastUpdate),
    initiator: processInstance.initiator,
    ...queryFields(processInstance),
    ...changeFields,
  }
}

export class ContextRepository {
  private readonly collection: Collection<StoredContext>

  constructor(private readonly store: Store) {
    this.collection = store.collection<StoredContext>(Collections.contexts)
  }

  /**
   * Lookups by id use `_id`, and by business key (`/notify/send`, changeStep) the tenant's
   * `engine_instances_by_key`; the reporting queries read their own indexes (queries/repository.ts).
   */
  async ensureIndexes(): Promise<void> {
    // Ended instances past the retention period, across tenants, oldest first (lifecycle/history-retention.ts).
    await this.collection.createIndex({ processStatus: 1, lastUpdate: 1 }, { name: 'engine_ended_by_age' })
    // The overdue-tasks query: the instances of an app with an open task due by now.
    await this.collection.createIndex({ appId: 1, nextDueAt: 1 }, { name: 'engine_overdue_tasks' })
    // The escalations coming due, across tenants (services/engine/jobs/escalations/promoter.ts).
    await this.collection.createIndex({ escalationsDueAt: 1 }, { name: 'engine_escalations_due' })
  }

  /**
   * The unfinished instances with an escalation that has not run falling due after `from` (when
   * given) and by `to`: one element of `escalationsDueAt` within both bounds.
   */
  escalationsDueIn(from: Date | undefined, to: Date): Promise<StoredContext[]> {
    const dueAt = from === undefined ? { $lte: to } : { $elemMatch: { $gt: from, $lte: to } }
    return this.collection.find({ escalationsDueAt: dueAt, processStatus: { $nin: ENDED_STATUSES } }).toArray()
  }

  /**
   * The stored instance, for reading: the engine never changes a loaded instance (a change is a new
   * state the runtime computes from its own copy, runtime/interpreter.ts `TransitionInProgress.of`),
   * so the embedded store hands over the document memory holds rather than a copy of it
   * (docs/performance.md#loaded-instances-without-a-copy). The test harness freezes what it hands over.
   */
  async find(processInstanceId: string): Promise<StoredContext | null> {
    const held = this.store.heldDocument?.(Collections.contexts, processInstanceId) as StoredContext | undefined
    return held ?? this.collection.findOne({ _id: processInstanceId })
  }

  /** How many instances match (a bulk job's total). */
  count(filter: Filter): Promise<number> {
    return this.collection.countDocuments(filter)
  }

  /** The next `limit` matching instances after `afterId` in `_id` order: a bulk job's page. */
  page(filter: Filter, afterId: string | undefined, limit: number): Promise<StoredContext[]> {
    const paged = afterId === undefined ? filter : { $and: [filter, { _id: { $gt: afterId } }] }
    return this.collection.find(paged, { sort: { _id: 1 }, limit }).toArray()
  }

  /**
   * The tenant's latest-updated instance of the process with this business key. The organization is
   * pinned with the app: another organization's instance under the same app id and key is not this
   * tenant's, and must not hide it.
   */
  async findByBusinessKey(tenant: Tenant, processId: string, businessKey: string): Promise<StoredContext | null> {
    return this.collection.findOne({ ...tenantFilter(tenant), businessKey, processId }, { sort: { lastUpdate: -1 } })
  }

  /** The instances of a process in one tenant that run on model `version` and have not ended, oldest first. */
  async unendedOnVersion(tenant: { appId: string; organizationId: string }, processId: string, version: number): Promise<StoredContext[]> {
    const filter = {
      processId,
      appId: tenant.appId,
      organizationId: tenant.organizationId,
      processStatus: { $nin: ENDED_STATUSES },
      'processInstance.modelVersion': version,
    }
    return this.collection.find(filter, { sort: { _id: 1 } }).toArray()
  }

  /**
   * Stores a new instance at version 1, with the request's other writes (`alongside`, the data
   * writes of its flow functions) and the fields the change adds (its activity log, what its commit
   * hooks derive): all of them or none (a duplicate id stores nothing).
   */
  async insert(state: ProcessState, alongside: readonly AtomicWrite[] = [], changeFields: ChangeFields = {}): Promise<StoredContext> {
    const stored: StoredContext = { _id: state.processInstance.processInstanceId, version: 1, ...documentFields(state, changeFields) }
    if (alongside.length === 0) await this.collection.insertOne(stored)
    else await this.store.applyAtomically([{ collection: Collections.contexts, kind: 'insertOne', doc: { ...stored } }, ...alongside])
    return stored
  }

  /**
   * Writes `next` over `previous` if nobody wrote in between, with the request's other writes
   * (`alongside`), all or none; null when someone did (the caller answers 409 and nothing of this
   * request is stored). The compare-and-set goes first, so even where the store cannot apply a
   * batch atomically (a standalone MongoDB server) losing it writes nothing.
   */
  async compareAndSet(
    previous: StoredContext,
    next: ProcessState,
    alongside: readonly AtomicWrite[] = [],
    changeFields: ChangeFields = {},
  ): Promise<StoredContext | null> {
    const fields = documentFields(next, changeFields)
    const filter = { _id: previous._id, version: previous.version }
    const update = { $set: fields, $inc: { version: 1 } }
    if (alongside.length === 0) {
      const result = await this.collection.updateOne(filter, update)
      if (result.matchedCount === 0) return null
    } else {
      try {
        await this.store.applyAtomically([
          { collection: Collections.contexts, kind: 'updateOne', filter, update, mustMatch: true },
          ...alongside,
        ])
      } catch (error) {
        if (isUnmatchedWriteError(error)) return null
        throw error
      }
    }
    return { _id: previous._id, version: previous.version + 1, ...fields }
  }
}

export function contextRepository(store: Store): ContextRepository {
  return new ContextRepository(store)
}

export default repositoryPlugin('contexts', ({ store }) => contextRepository(store), { name: 'contexts-repository' })
