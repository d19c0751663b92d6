/**
 * Model validation (docs/models.md; the format: openapi/components/models.yaml): a model's structure
 * is the model schema (validation/structure.ts checks it with Ajv), and for what a schema cannot say
 * the checks of validation/: references between steps, swimlanes and functions, expressions and
 * what they may cost, JSON Schemas, durations, cron patterns. A pure function (no HTTP, no store):
 * the gateway's insertModel answers 400 with the first fault's path, and the engine's runtime
 * compiler relies on a stored model having passed it, so whatever the runtime would trip over is
 * rejected here.
 *
 * Paths name the fault from the model's root: `modelBody.steps.approve.actions[1].next`.
 */
import type { FlowFunctionDefinition, ProcessModelBody, WorkflowModel } from './types.js'
import { Fault } from './validation/checks.js'
import { processBody } from './validation/process-model.js'
import { functionsBody, jobSchedulerBody } from './validation/other-models.js'
import { DEFINITIONS, MODEL_SCHEMA } from './validation/schema.js'
import { checkStructure } from './validation/structure.js'

export { createModelSchemaCompiler } from './validation/checks.js'
export { MODEL_ID_PATTERN, SETTINGS_FILE_PATTERN } from './validation/schema.js'

export interface ModelFault {
  path: string
  message: string
}

export interface ModelToValidate {
  modelID: unknown
  type: unknown
  modelBody: unknown
}

/** The model types, as the model schema lists them. */
export const MODEL_TYPES = DEFINITIONS.ModelType!.enum as ReadonlyArray<WorkflowModel['type']>

/** The schema of each type's body: the model schema chooses it by `type` (`if`/`then` in its `allOf`). */
const BODY_SCHEMAS = new Map(
  (
    MODEL_SCHEMA.allOf as Array<{ if: { properties: { type: { const: string } } }; then: { properties: { modelBody: { $ref: string } } } }>
  ).map((choice) => [choice.if.properties.type.const, choice.then.properties.modelBody.$ref.slice(1)]),
)

/**
 * The first fault of a model, or null when it is valid. `knownAppFunctions` are the function ids
 * that `functions` models of the same app define: a reference may name one of them instead of a
 * function of the model itself.
 */
export function validateModel(model: ModelToValidate, knownAppFunctions: ReadonlySet<string> = new Set()): ModelFault | null {
  try {
    checkStructure(model.modelID, '/properties/modelID', 'modelID')
    checkStructure(model.type, '/properties/type', 'type')
    const type = model.type as WorkflowModel['type']
    // A form body is the client's (its form renderer's): any JSON value.
    if (type === 'form') {
      if (model.modelBody === undefined) throw new Fault('modelBody', 'is required')
      return null
    }
    checkStructure(model.modelBody, BODY_SCHEMAS.get(type)!, 'modelBody')
    if (type === 'process') processBody(model.modelBody as ProcessModelBody, knownAppFunctions)
    if (type === 'functions') functionsBody(model.modelBody as { functions: Record<string, FlowFunctionDefinition> }, knownAppFunctions)
    if (type === 'jobScheduler') jobSchedulerBody(model.modelBody as Parameters<typeof jobSchedulerBody>[0])
    return null
  } catch (error) {
    if (error instanceof Fault) return { path: error.path, message: error.problem }
    throw error
  }
}
