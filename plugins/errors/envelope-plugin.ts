/** `reply.envelope(data)`: a successful gateway answer in the envelope `{ status: 'success', data }`. */
import type { FastifyInstance, FastifyReply } from 'fastify'
import fp from 'fastify-plugin'
import { successEnvelope } from './envelope.js'

declare module 'fastify' {
  interface FastifyReply {
    envelope(data: unknown): FastifyReply
  }
}

async function envelopePlugin(fastify: FastifyInstance): Promise<void> {
  fastify.decorateReply('envelope', function (this: FastifyReply, data: unknown) {
    return this.send(successEnvelope(data))
  })
}

export default fp(envelopePlugin, { name: 'envelope', fastify: '5.x' })
