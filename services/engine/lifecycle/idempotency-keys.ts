/**
 * The `idempotencyKeys` collection: one document per claimed key of a caller (`_id` unique, so of
 * any number of concurrent claims, on any number of engines, exactly one inserts). A TTL index on
 * `expiresAt` removes keys IDEMPOTENCY_TTL_HOURS after their claim; until the store's sweep has run,
 * readers treat an expired key as absent.
 */
import { repositoryPlugin } from '../../../plugins/store/repository-plugin.js'
import { type Collection, isDuplicateKeyError, type Store } from '../../../store/port.js'
import { Collections, type StoredIdempotencyKey } from '../../../store/collections.js'

declare module 'fastify' {
  interface FastifyInstance {
    idempotencyKeys: IdempotencyKeyRepository
  }
}

export class IdempotencyKeyRepository {
  private readonly collection: Collection<StoredIdempotencyKey>

  constructor(store: Store) {
    this.collection = store.collection<StoredIdempotencyKey>(Collections.idempotencyKeys)
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex({ expiresAt: 1 }, { name: 'engine_idempotency_ttl', expireAfterSeconds: 0 })
  }

  /** Inserts the claim; false when the key is already claimed (the caller's scoped key being the `_id`, see idempotencyKeyId). */
  async claim(key: StoredIdempotencyKey): Promise<boolean> {
    try {
      await this.collection.insertOne({ ...key })
      return true
    } catch (error) {
      if (isDuplicateKeyError(error)) return false
      throw error
    }
  }

  find(id: string): Promise<StoredIdempotencyKey | null> {
    return this.collection.findOne({ _id: id })
  }

  /** Takes over a claim whose holder let it lapse; false when someone else changed it first. */
  async takeOver(previous: StoredIdempotencyKey, claimId: string, claimedUntil: Date): Promise<boolean> {
    const result = await this.collection.updateOne(
      { _id: previous._id, claimId: previous.claimId, answer: { $exists: false } },
      { $set: { claimId, claimedUntil } },
    )
    return result.matchedCount === 1
  }

  /** Keeps the first answer with the claim that produced it; false when the claim was taken over meanwhile. */
  async answer(id: string, claimId: string, answer: NonNullable<StoredIdempotencyKey['answer']>): Promise<boolean> {
    const result = await this.collection.updateOne({ _id: id, claimId }, { $set: { answer } })
    return result.matchedCount === 1
  }

  /** Gives up a claim (its request failed, or it expired), so that the key can be claimed again. */
  async release(id: string, claimId: string): Promise<void> {
    await this.collection.deleteOne({ _id: id, claimId })
  }
}

export default repositoryPlugin('idempotencyKeys', ({ store }) => new IdempotencyKeyRepository(store), { name: 'idempotency-keys' })
