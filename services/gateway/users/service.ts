/**
 * User management (docs/reference/gateway.md#users): create checks the three mandatory fields in
 * their documented order and leaves the case-insensitive uniqueness of `fullName` within the tenant to the store's
 * unique index, so two concurrent creates cannot both win; update replaces the stored document whole, unchecked.
 */
import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { User, UserInput } from '../../../openapi/generated/schemas.js'
import type { GatewayErrorCode } from '../../../openapi/generated/errors.js'
import type { ErrorFactory } from '../../../plugins/errors/service-error.js'
import { evictUsers } from '../../../plugins/cache/written-elsewhere.js'
import { isDuplicateKeyError } from '../../../store/port.js'
import { fullNameKey, type TenantScope, type UserDocument, type UserRepository } from './repository.js'

declare module 'fastify' {
  interface FastifyInstance {
    users: UserService
  }
}

/** The document to store: the input as given (parsed JSON: nothing undefined), its id and its name's key. */
function userDocument(input: UserInput, userId: string): UserDocument {
  const user: UserDocument = { ...input, userId }
  if (input.fullName !== undefined) user.fullNameKey = fullNameKey(input.fullName)
  return user
}

/** The record as answered: everything but the comparison key. */
function userRecord(user: UserDocument): User {
  const { fullNameKey: _key, ...record } = user
  return record
}

export class UserService {
  constructor(
    private readonly repository: UserRepository,
    private readonly fail: ErrorFactory<GatewayErrorCode>,
    /** Drops every instance's cached users (identity, swimlane members) before a write is answered. */
    private readonly usersChanged: () => Promise<void>,
  ) {}

  async create(input: UserInput): Promise<User> {
    if (input.fullName === undefined || input.fullName.trim() === '') throw this.fail('fm3001', { parameters: { field: 'body.fullName' } })
    if (input.unit === undefined) throw this.fail('fm3002', { parameters: { field: 'body.unit' } })
    if (!input.roles?.some((role) => role.trim() !== '')) throw this.fail('fm3003', { parameters: { field: 'body.roles' } })
    const user = userDocument(input, randomUUID())
    try {
      await this.repository.insert(user)
    } catch (error) {
      if (isDuplicateKeyError(error)) throw this.fail('fm3004', { parameters: { field: 'body.fullName' }, cause: error })
      throw error
    }
    await this.usersChanged()
    return userRecord(user)
  }

  /** The stored document is replaced as given, without required-field or uniqueness checks (docs/reference/gateway.md#users). */
  async update(input: UserInput): Promise<User> {
    const userId = input.userId
    if (userId === undefined || userId === '') throw this.fail('fm3005', { parameters: { field: 'body.userId' } })
    const user = userDocument(input, userId)
    let replaced: boolean
    try {
      replaced = await this.repository.replace(user)
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error
      // The name is already another user's: kept as given, but only that user holds its key.
      delete user.fullNameKey
      replaced = await this.repository.replace(user)
    }
    if (!replaced) throw this.fail('fm3005', { parameters: { field: 'body.userId' } })
    await this.usersChanged()
    return userRecord(user)
  }

  async delete(userId: string, scope: TenantScope): Promise<void> {
    if (!(await this.repository.delete(userId, scope))) throw this.fail('fm3005', { parameters: { field: 'body.id' } })
    await this.usersChanged()
  }

  async get(userId: string, scope: TenantScope): Promise<User | null> {
    const user = await this.repository.findById(userId, scope)
    return user ? userRecord(user) : null
  }

  async list(scope: TenantScope): Promise<User[]> {
    return (await this.repository.list(scope)).map(userRecord)
  }
}

async function userServicePlugin(fastify: FastifyInstance): Promise<void> {
  const usersChanged = (): Promise<void> => evictUsers(fastify.store, fastify.caches)
  fastify.decorate('users', new UserService(fastify.userRepository, fastify.fail, usersChanged))
}

export default fp(userServicePlugin, { name: 'user-service', dependencies: ['user-repository', 'errors', 'store', 'caches'] })
