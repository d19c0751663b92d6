/**
 * Idempotent starts (docs/reference/consistency.md#idempotent-starts): a start carrying an `idempotency-key` header claims the key of its
 * caller in the store *before* any instance is created (one insert on a unique `_id`, so of 20
 * concurrent duplicates exactly one claims it, on whatever engine). The claimant runs; its 2xx
 * answer is kept with the key and every later request with the same key and body gets that answer
 * again with `idempotent-replayed: true`; duplicates that arrive while it runs wait for it. A first
 * request that fails gives the key up, so a retry runs; one whose engine died keeps it until its
 * claim lapses, and the retry that takes it over starts the *same* instance id (ProcessStarter
 * answers the stored instance if the first got as far as storing it). The same key with another
 * body is 422 wm3142.
 *
 * A key belongs to its caller: the acting user, in the tenant (organizationId + appId), on the
 * route. Another user sending the same key and body claims a key of their own and starts their own
 * instance; they never get the first caller's answer, which holds that caller's instance and data.
 */
import { createHash, randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance, FastifyReply, FastifyRequest, onSendHookHandler, preHandlerHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import { newInstanceId } from '../../../lib/instance-id.js'
import type { EngineErrorCode } from '../../../openapi/generated/errors.js'
import type { Clock } from '../../../plugins/clock/plugin.js'
import type { ErrorFactory } from '../../../plugins/errors/service-error.js'
import { requireActor } from '../../../plugins/identity/actor.js'
import type { StoredIdempotencyKey } from '../../../store/collections.js'
import type { IdempotencyKeyRepository } from './idempotency-keys.js'

export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key'
export const REPLAYED_HEADER = 'idempotent-replayed'

/**
 * How long a claim stays with a request that has not answered: the gateway gives up on a start
 * after 60 s, so a claim older than that belongs to a request nobody waits for any more.
 */
export const CLAIM_LEASE_MS = 60_000
/** How often a duplicate looks whether the first request has answered. */
const WAIT_POLL_MS = 20

declare module 'fastify' {
  interface FastifyRequest {
    /** Set when this request holds the claim of its idempotency key. */
    idempotentStart?: { id: string; claimId: string; processInstanceId: string }
  }
}

/** JSON with object keys in sorted order, so the same body hashes the same whatever its key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, item]) => item !== undefined)
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}

export function requestHash(route: string, body: unknown): string {
  return createHash('sha256')
    .update(route)
    .update('\n')
    .update(canonicalJson(body ?? null))
    .digest('hex')
}

/** Who sent a key, and where: a key is only ever the same key for the same caller on the same route. */
export interface KeyScope {
  organizationId: string
  appId: string
  userId: string
  route: string
}

/**
 * The stored `_id` of a key: a SHA-256 over the scope and the key, hex without any `:`. The previous
 * release stored `<appId>:<organizationId>:<key>` (scoped to the tenant only); those ids always hold a
 * `:`, so they never equal one of these, are never read again and simply expire by their TTL.
 */
export function idempotencyKeyId(scope: KeyScope, key: string): string {
  return createHash('sha256')
    .update(JSON.stringify([scope.organizationId, scope.appId, scope.userId, scope.route, key]))
    .digest('hex')
}

export interface IdempotentStartOptions {
  repository: IdempotencyKeyRepository
  ttlHours: number
  clock: Clock
  fail: ErrorFactory<EngineErrorCode>
}

export interface IdempotentStartHooks {
  preHandler: preHandlerHookHandler
  onSend: onSendHookHandler
}

/** A request that is no start (`/context` opening an existing instance) has nothing to claim. */
export type StartsInstance = (request: FastifyRequest) => boolean

export class IdempotentStarts {
  constructor(private readonly options: IdempotentStartOptions) {}

  /** The route hooks: claim (or replay, or wait) before the handler, keep or give up the claim with the answer. */
  hooks(startsInstance: StartsInstance = () => true): IdempotentStartHooks {
    // Callback hooks: nearly every start carries no key, and then neither hook has anything to
    // wait for, so none makes a promise for it. A hook that answers (a replay) does not call `done`:
    // the route ends there.
    const preHandler: preHandlerHookHandler = (request, reply, done) => {
      const key = request.headers[IDEMPOTENCY_KEY_HEADER]
      if (typeof key !== 'string' || !startsInstance(request)) return done()
      this.claimOrReplay(request, reply, key).then((replayed) => {
        if (!replayed) done()
      }, done)
    }
    const onSend: onSendHookHandler = (request, reply, payload, done) => {
      const claim = request.idempotentStart
      if (!claim) return done(null, payload)
      this.settleClaim(request, reply, claim, payload).then(() => done(null, payload), done)
    }
    return { preHandler, onSend }
  }

  /** Keeps a successful answer under its claim, or gives the claim up for any other. */
  private async settleClaim(
    request: FastifyRequest,
    reply: FastifyReply,
    claim: NonNullable<FastifyRequest['idempotentStart']>,
    payload: unknown,
  ): Promise<void> {
    const { repository } = this.options
    if (reply.statusCode >= 200 && reply.statusCode < 300 && typeof payload === 'string') {
      if (!(await repository.answer(claim.id, claim.claimId, { statusCode: reply.statusCode, body: payload }))) {
        request.log.warn({ idempotencyKey: claim.id }, 'the claim of an idempotency key was taken over before its answer was kept')
      }
    } else {
      await repository.release(claim.id, claim.claimId)
    }
  }

  /** True when the stored first answer was sent; false when this request holds the claim and runs. */
  private async claimOrReplay(request: FastifyRequest, reply: FastifyReply, key: string): Promise<boolean> {
    const { repository, clock, fail } = this.options
    const actor = requireActor(request)
    const route = request.routeOptions.url ?? request.url
    const id = idempotencyKeyId({ organizationId: actor.organizationId, appId: actor.appId, userId: actor.userId, route }, key)
    const hash = requestHash(route, request.body)
    const claimId = randomUUID()
    // A duplicate waits at most as long as the gateway would.
    const waitUntil = clock().getTime() + CLAIM_LEASE_MS
    for (;;) {
      const now = clock()
      const claim: StoredIdempotencyKey = {
        _id: id,
        requestHash: hash,
        processInstanceId: newInstanceId(),
        claimId,
        claimedUntil: new Date(now.getTime() + CLAIM_LEASE_MS),
        expiresAt: new Date(now.getTime() + this.options.ttlHours * 3_600_000),
      }
      if (await repository.claim(claim)) {
        request.idempotentStart = { id, claimId, processInstanceId: claim.processInstanceId }
        return false
      }
      const existing = await repository.find(id)
      if (!existing) continue
      if (existing.expiresAt.getTime() <= now.getTime()) {
        // Expired, the TTL sweep has not removed it yet: the key is free again.
        await repository.release(id, existing.claimId)
        continue
      }
      if (existing.requestHash !== hash) throw fail('wm3142', { args: [key], parameters: { field: `headers.${IDEMPOTENCY_KEY_HEADER}` } })
      if (existing.answer) {
        reply
          .code(existing.answer.statusCode)
          .header(REPLAYED_HEADER, 'true')
          .type('application/json; charset=utf-8')
          .send(existing.answer.body)
        return true
      }
      if (existing.claimedUntil.getTime() <= now.getTime()) {
        // Its request died: this one takes the claim over and starts the instance that one meant to.
        const claimedUntil = new Date(now.getTime() + CLAIM_LEASE_MS)
        if (await repository.takeOver(existing, claimId, claimedUntil)) {
          request.idempotentStart = { id, claimId, processInstanceId: existing.processInstanceId }
          return false
        }
        continue
      }
      if (now.getTime() >= waitUntil) throw fail('wm3143', { args: [key], parameters: { field: `headers.${IDEMPOTENCY_KEY_HEADER}` } })
      await sleep(WAIT_POLL_MS)
    }
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    idempotentStarts: IdempotentStarts
  }
}

export interface IdempotentStartsPluginOptions {
  ttlHours: number
}

async function idempotentStartsPlugin(fastify: FastifyInstance, options: IdempotentStartsPluginOptions): Promise<void> {
  fastify.decorate(
    'idempotentStarts',
    new IdempotentStarts({ repository: fastify.idempotencyKeys, ttlHours: options.ttlHours, clock: fastify.clock, fail: fastify.fail }),
  )
}

export default fp(idempotentStartsPlugin, { name: 'idempotent-starts', dependencies: ['idempotency-keys', 'clock', 'errors'] })
