/**
 * What Swagger UI shows from the served documents: each error answer's example is one of its own
 * status, the start example is a process the quick start deploys, and every path parameter has an
 * example to try.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { generatedOpenapiDir } from '../../lib/server/paths.js'

type Json = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

const served = (name: string): Json => JSON.parse(readFileSync(join(generatedOpenapiDir, `${name}.openapi.json`), 'utf8')) as Json
const documents = { gateway: served('gateway'), engine: served('engine') }

function deref(document: Json, node: Json): Json {
  if (typeof node.$ref !== 'string') return node
  return (node.$ref as string)
    .slice(2)
    .split('/')
    .reduce((at: Json, key: string) => at[key] as Json, document)
}

function* operations(document: Json): Generator<[string, Json]> {
  for (const [path, item] of Object.entries(document.paths as Json))
    for (const [method, operation] of Object.entries(item as Json))
      if (typeof operation === 'object' && operation !== null && 'responses' in operation)
        yield [`${method.toUpperCase()} ${path}`, operation as Json]
}

/** The HTTP status an error example stands for: the engine record's `statusCode`, or the envelope's code's catalogue status class. */
function exampleStatusClass(example: Json): string {
  if (typeof example.statusCode === 'number') return String(example.statusCode)
  return example.status as string
}

t.test('every error answer shows an example of its own status', async (t) => {
  const wrong: string[] = []
  for (const [name, document] of Object.entries(documents)) {
    for (const [operation, definition] of operations(document)) {
      for (const [status, response] of Object.entries(definition.responses as Json)) {
        if (Number(status) < 400) continue
        const example = deref(document, response as Json).content?.['application/json']?.example as Json | undefined
        if (!example) continue
        const expected =
          name === 'engine'
            ? status
            : Number(status) === 401 || Number(status) === 403
              ? 'permissionError'
              : Number(status) >= 500
                ? 'error'
                : 'customerror'
        if (exampleStatusClass(example) !== expected) wrong.push(`${name} ${operation} ${status}: ${JSON.stringify(example)}`)
      }
    }
  }
  t.same(wrong, [])
  const notFound = deref(documents.gateway, documents.gateway.paths['/action/start'].post.responses['404'] as Json)
  t.equal(notFound.content['application/json'].example.error.code, 'wm3002', "a start's 404 shows the engine's process-not-found code")
})

t.test('the start example starts the leave request the quick start deploys', async (t) => {
  for (const [name, path] of [
    ['gateway', '/action/start'],
    ['engine', '/process/start'],
  ] as const) {
    const example = documents[name].paths[path].post.requestBody.content['application/json'].example as Json
    t.equal(example.processId, 'leave-request', `${name} ${path}`)
  }
})

t.test('every path parameter has an example', async (t) => {
  const missing: string[] = []
  for (const [name, document] of Object.entries(documents))
    for (const [operation, definition] of operations(document))
      for (const parameter of (definition.parameters ?? []) as Json[]) {
        const resolved = deref(document, parameter)
        if (resolved.in === 'path' && resolved.example === undefined) missing.push(`${name} ${operation} ${resolved.name as string}`)
      }
  t.same(missing, [])
})
