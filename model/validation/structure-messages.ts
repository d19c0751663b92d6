/**
 * The words of a structural fault where the generic ones (structure.ts: "must be an object", "must be
 * one of …", "is not a known field …") would not say what is wrong: by definition of the model schema
 * (openapi/components/models.yaml), what its faults say. A message is a text, or a function of the
 * value the fault is at (for a missing field, a `not` or a `oneOf`: the object that holds it).
 */
import { isoDurationProblem } from './checks.js'

export type StructureMessage = string | ((instance: unknown) => string)

export interface DefinitionMessages {
  /** A missing field, by its name. */
  required?: Record<string, StructureMessage>
  /** Any fault of the named field (missing, wrong type, wrong value). */
  fields?: Record<string, StructureMessage>
  /** Any fault of a value of the definition itself. */
  value?: StructureMessage
  /** A field the definition refuses (`not: { required: [field] }`): the fault is at that field. */
  not?: StructureMessage
  minProperties?: StructureMessage
  /** An object key the definition refuses: the fault is at that key. */
  propertyNames?: StructureMessage
  oneOf?: StructureMessage
  uniqueItems?: StructureMessage
}

/** `{ actionType: 'complete' }` -> 'complete': a field of the object a fault is at. */
function field(instance: unknown, name: string): string {
  return String((instance as Record<string, unknown>)[name])
}

/** The method names an http node accepts (in any case); the schema says it as a pattern. */
export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']

export const definitionMessages: Record<string, DefinitionMessages> = {
  ProcessBody: { required: { start: 'is required', steps: 'is required' }, minProperties: 'must define at least one step' },
  UserTaskStep: { not: 'is not allowed with dueIn (give one of them)' },
  IsoDuration: { value: (value) => isoDurationProblem(value) },
  EscalationDefinition: {
    required: { userId: 'is required for do "assignToUser" (an expression giving the userId)' },
    not: (escalation) => `is not allowed with do "${field(escalation, 'do')}"`,
  },
  TaskActionDefinition: {
    required: {
      function: 'is required for a function action',
      next: (action) => `is required for a ${field(action, 'actionType')} action`,
    },
    not: 'is not allowed on a function action (it does not end the task)',
  },
  ExternalTaskStep: { required: { topic: 'is required (the topic workers fetch the task by)' } },
  ParallelStep: {
    uniqueItems: (branches) => {
      const steps = branches as string[]
      return `lists step "${steps.find((step, position) => steps.indexOf(step) !== position)}" twice`
    },
  },
  FlowFunction: { required: { steps: 'is required' } },
  SetNode: { minProperties: 'must assign at least one path' },
  HttpNode: { fields: { method: `must be one of ${HTTP_METHODS.join(', ')}`, timeoutMs: 'must be a positive integer' } },
  DataNode: {
    required: {
      doc: (node) => `is required for a ${field(node, 'data')}`,
      filter: (node) => `is required for a ${field(node, 'data')}`,
      set: (node) => `is required for a ${field(node, 'data')}`,
    },
    not: (node) => `is not used by a ${field(node, 'data')}`,
  },
  SettingsBody: { required: { files: 'is required' }, propertyNames: 'file id must match ^[A-Za-z0-9_-]{1,64}$' },
  ConstantsBody: { propertyNames: 'constant names are at most 128 characters' },
  FunctionsBody: { required: { functions: 'is required' } },
  DataCollectionBody: { minProperties: 'must name at least one field', propertyNames: 'is not a valid field path' },
  JobSchedulerBody: { required: { schedules: 'is required' } },
  Schedule: { oneOf: 'must have exactly one of startProcess and runFunction' },
}
