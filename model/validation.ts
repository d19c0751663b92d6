/**
 * Model validation (MODEL.md): the schema of every model type and, for process models, every
 * reference, JSON Schema and expression. A pure function (no HTTP, no store): the gateway's
 * insertModel answers 400 with the first fault's path, and the engine's runtime compiler relies on
 * a stored model having passed it, so whatever the runtime would trip over is rejected here.
 *
 * Paths name the fault from the model's root: `modelBody.steps.approve.actions[1].next`.
 */
import type { WorkflowModel } from './types.js'
import { Fault, modelIdLike, oneOf, record } from './validation/checks.js'
import { processBody } from './validation/process-model.js'
import { constantsBody, dataCollectionBody, functionsBody, jobSchedulerBody, settingsBody } from './validation/other-models.js'

export { createModelSchemaCompiler, MODEL_ID_PATTERN } from './validation/checks.js'
export { SETTINGS_FILE_PATTERN } from './validation/other-models.js'

export interface ModelFault {
  path: string
  message: string
}

export interface ModelToValidate {
  modelID: unknown
  type: unknown
  modelBody: unknown
}

export const MODEL_TYPES: ReadonlyArray<WorkflowModel['type']> = [
  'process',
  'form',
  'settings',
  'constants',
  'functions',
  'dataCollection',
  'jobScheduler',
]

/**
 * The first fault of a model, or null when it is valid. `knownAppFunctions` are the function ids
 * that `functions` models of the same app define: a reference may name one of them instead of a
 * function of the model itself.
 */
export function validateModel(model: ModelToValidate, knownAppFunctions: ReadonlySet<string> = new Set()): ModelFault | null {
  try {
    modelIdLike(model.modelID, 'modelID')
    const type = oneOf(model.type, 'type', MODEL_TYPES)
    if (type === 'form') {
      if (model.modelBody === undefined) throw new Fault('modelBody', 'is required')
      return null
    }
    const body = record(model.modelBody, 'modelBody')
    switch (type) {
      case 'process':
        processBody(body, knownAppFunctions)
        break
      case 'settings':
        settingsBody(body)
        break
      case 'constants':
        constantsBody(body)
        break
      case 'functions':
        functionsBody(body, knownAppFunctions)
        break
      case 'dataCollection':
        dataCollectionBody(body)
        break
      case 'jobScheduler':
        jobSchedulerBody(body)
        break
    }
    return null
  } catch (error) {
    if (error instanceof Fault) return { path: error.path, message: error.problem }
    throw error
  }
}
