/**
 * The service's clock, decorated as `fastify.clock`: every "now" the engine stores or compares
 * (schedule ticks, job leases, lock expiry, the runtime's timestamps) is read from it. Production
 * runs the system clock; tests pass a clock they move forward, so they prove what happens
 * hours later without waiting for it.
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

/** Answers the current time. */
export type Clock = () => Date

export const systemClock: Clock = () => new Date()

declare module 'fastify' {
  interface FastifyInstance {
    clock: Clock
  }
}

export interface ClockPluginOptions {
  /** The system clock when not given. */
  clock?: Clock | undefined
}

async function clockPlugin(fastify: FastifyInstance, options: ClockPluginOptions): Promise<void> {
  fastify.decorate('clock', options.clock ?? systemClock)
}

export default fp(clockPlugin, { name: 'clock', fastify: '5.x' })
