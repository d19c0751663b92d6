/**
 * The structure model validation checks is the published model schema: the module model/ reads is
 * openapi/generated/model.schema.json, its words for a fault come from the schema (the fields it
 * knows, the values it allows), and whatever the published schema refuses, validateModel refuses.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'
import t from 'tap'
import { examplesDir, generatedOpenapiDir } from '../../lib/server/paths.js'
import { modelSchema } from '../generated/model-schema.js'
import { type ModelToValidate, validateModel } from '../validation.js'

type Json = Record<string, unknown>
type Model = ModelToValidate & Json

const published = JSON.parse(readFileSync(join(generatedOpenapiDir, 'model.schema.json'), 'utf8')) as Json
const definitions = published.$defs as Record<string, Json>
// Any validator's reading of the published schema (not the service's own compiler).
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020
const schemaAccepts = addFormats(new Ajv2020({ strict: false, allErrors: true })).compile(published)

const exampleFiles = readdirSync(examplesDir).filter((name) => name.endsWith('.json'))
const example = (name: string): Model => JSON.parse(readFileSync(join(examplesDir, name), 'utf8')) as Model
const appFunctions = new Set(
  exampleFiles
    .map(example)
    .flatMap((model) => (model.type === 'functions' ? Object.keys((model.modelBody as { functions: Json }).functions) : [])),
)

t.test('model/ checks the schema it publishes (model/generated/model-schema.ts is openapi/generated/model.schema.json)', async (t) => {
  t.same(modelSchema, published)
})

t.test("the words of a structural fault are the schema's: the fields it knows, the step types it has", async (t) => {
  const model = example('leave-request.json')
  const body = model.modelBody as Json & { steps: Record<string, Json> }
  body.deadline = 'P3D'
  const known = Object.keys(definitions.ProcessBody!.properties as Json)
  t.same(validateModel(model, appFunctions), { path: 'modelBody.deadline', message: `is not a known field (allowed: ${known.join(', ')})` })

  delete body.deadline
  body.steps.approve!.type = 'review'
  const stepTypes = (definitions.ProcessStep!.oneOf as Array<{ $ref: string }>).map(
    ({ $ref }) => ((definitions[$ref.split('/').pop()!]!.properties as Record<string, Json>).type as { const: string }).const,
  )
  t.same(validateModel(model, appFunctions), { path: 'modelBody.steps.approve.type', message: `must be one of ${stepTypes.join(', ')}` })
})

/** Every path of a value below `at` (`['modelBody', 'steps', 'approve']`). */
function pathsOf(value: unknown, at: string[]): string[][] {
  if (value === null || typeof value !== 'object') return [at]
  return [at, ...Object.entries(value).flatMap(([key, item]) => pathsOf(item, [...at, key]))]
}

/** A copy of `model` whose value at `path` is `replacement` (removed when undefined). */
function withValue(model: Model, path: string[], replacement: unknown): Model {
  const copy = structuredClone(model)
  let container = copy as Json
  for (const key of path.slice(0, -1)) container = container[key] as Json
  const last = path.at(-1)!
  if (replacement === undefined && !Array.isArray(container)) delete container[last]
  else container[last] = structuredClone(replacement)
  return copy
}

t.test('every variant of the examples that the published schema refuses, validateModel refuses', async (t) => {
  const replacements = [undefined, '', 'x', 0, 2.5, true, [], {}, { unknownField: 1 }]
  let refused = 0
  for (const file of exampleFiles) {
    const model = example(file)
    // A form body is the client's: any JSON value passes validateModel, where the published schema
    // (the request's `ModelBody`) wants an object.
    const paths = model.type === 'form' ? [['modelID'], ['type']] : [['modelID'], ['type'], ...pathsOf(model.modelBody, ['modelBody'])]
    for (const path of paths) {
      for (const replacement of replacements) {
        const variant = withValue(model, path, replacement)
        if (schemaAccepts(variant)) continue
        refused++
        const fault = validateModel(variant, appFunctions)
        if (fault === null) t.fail(`${file}: ${path.join('.')} = ${JSON.stringify(replacement)} is refused by the schema only`)
      }
    }
  }
  t.ok(refused > 1000, `the schema refused ${refused} variants, and validateModel each of them`)
})
