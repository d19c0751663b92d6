/**
 * The model schema (openapi/components/models.yaml, generated as model/generated/model-schema.ts):
 * its definitions, and the patterns other code shares with it.
 */
import { modelSchema } from '../generated/model-schema.js'

export type SchemaNode = Record<string, unknown>

export const MODEL_SCHEMA: SchemaNode = modelSchema
export const MODEL_SCHEMA_ID = modelSchema.$id as string
export const DEFINITIONS = modelSchema.$defs as Record<string, SchemaNode>

const modelProperties = modelSchema.properties as Record<string, SchemaNode>
const settingsFiles = (DEFINITIONS.SettingsBody!.properties as Record<string, SchemaNode>).files!

/** Model ids (`modelID`, a step's `form`, a schedule's `processId`). */
export const MODEL_ID_PATTERN = new RegExp(modelProperties.modelID!.pattern as string)

/** Settings file ids, also the `:file` of `GET /settings/:file`. */
export const SETTINGS_FILE_PATTERN = new RegExp((settingsFiles.propertyNames as SchemaNode).pattern as string)

/** `#/$defs/IsoDuration` -> 'IsoDuration' (undefined for any other reference). */
export function definitionName(reference: unknown): string | undefined {
  return typeof reference === 'string' && reference.startsWith('#/$defs/') ? reference.slice('#/$defs/'.length) : undefined
}
