/**
 * Fastify's response serializer builder, compiling each response schema once per set of shared
 * schemas instead of once per route and status code.
 *
 * Every operation of the OpenAPI documents answers its errors with the same envelope schema object
 * (openapi/generated/), so Fastify's own builder compiled that one schema about 400 times at each
 * start of the engine: a new fast-json-stringify serializer, with an Ajv instance of its own, per
 * route and status code. A serializer depends only on the schema and the shared schemas it may
 * reference, so the compiler hands out the one it built for the same schema object.
 */
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'

type SerializerFactory = ReturnType<typeof SerializerSelector>
type Serializer = ReturnType<ReturnType<SerializerFactory>>

export function serializerPerSchema(): SerializerFactory {
  const buildCompiler = SerializerSelector()
  return (sharedSchemas, options) => {
    const compile = buildCompiler(sharedSchemas, options)
    const built = new WeakMap<object, Serializer>()
    return (route) => {
      const { schema } = route
      if (typeof schema !== 'object' || schema === null) return compile(route)
      let serializer = built.get(schema)
      if (serializer === undefined) {
        serializer = compile(route)
        built.set(schema, serializer)
      }
      return serializer
    }
  }
}
