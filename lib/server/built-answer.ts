/**
 * For answers a service builds field by field, so their shape is the route's schema by construction
 * (the history and running-instance queries, services/engine/queries/service.ts): the reply is
 * serialized by V8's `JSON.stringify` instead of the schema's fast-json-stringify serializer, which
 * checks every string character by character in JavaScript and costs about four times as much on an
 * answer of 20,000 instances (docs/performance.md#large-answers). Errors keep the schema's serializer.
 */
import type { FastifyReply } from 'fastify'

export function builtAnswer<T>(reply: FastifyReply, answer: T): T {
  // A custom serializer leaves the content type to the route; the gateway envelopes JSON answers only.
  reply.type('application/json; charset=utf-8').serializer(JSON.stringify)
  return answer
}
