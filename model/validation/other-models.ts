/** The model types besides process and form: settings, constants, functions, data collections, job schedulers. */
import { Cron } from 'croner'
import { Fault, type JsonRecord, child, list, modelIdLike, onlyKeys, optionalBoolean, optionalText, record, text } from './checks.js'
import { functionMap } from './flow-functions.js'

/** Settings file ids (DESIGN.md §6), also the `:file` of `GET /settings/:file`. */
export const SETTINGS_FILE_PATTERN = /^[A-Za-z0-9_-]{1,64}$/

export function settingsBody(body: JsonRecord): void {
  onlyKeys(body, 'modelBody', ['files'])
  if (body.files === undefined) throw new Fault('modelBody.files', 'is required')
  const files = record(body.files, 'modelBody.files')
  for (const [fileId, content] of Object.entries(files)) {
    const path = child('modelBody.files', fileId)
    if (!SETTINGS_FILE_PATTERN.test(fileId)) throw new Fault(path, `file id must match ${SETTINGS_FILE_PATTERN.source}`)
    if (content === undefined) throw new Fault(path, 'must be a JSON value')
  }
}

export function constantsBody(body: JsonRecord): void {
  for (const [name, value] of Object.entries(body)) {
    const path = child('modelBody', name)
    if (name.length > 128) throw new Fault(path, 'constant names are at most 128 characters')
    if (typeof value !== 'string') throw new Fault(path, 'must be a string')
  }
}

export function functionsBody(body: JsonRecord, appFunctions: ReadonlySet<string>): void {
  onlyKeys(body, 'modelBody', ['functions'])
  if (body.functions === undefined) throw new Fault('modelBody.functions', 'is required')
  functionMap(body.functions, 'modelBody.functions', appFunctions)
}

export function dataCollectionBody(body: JsonRecord): void {
  onlyKeys(body, 'modelBody', ['name', 'indexes'])
  text(body.name, 'modelBody.name')
  if (body.indexes === undefined) return
  list(body.indexes, 'modelBody.indexes').forEach((value, position) => {
    const path = child('modelBody.indexes', position)
    const index = record(value, path)
    onlyKeys(index, path, ['keys', 'unique'])
    const keys = record(index.keys, child(path, 'keys'))
    if (Object.keys(keys).length === 0) throw new Fault(child(path, 'keys'), 'must name at least one field')
    for (const [field, direction] of Object.entries(keys)) {
      const fieldPath = child(child(path, 'keys'), field)
      if (field.startsWith('$') || field.split('.').some((segment) => segment.length === 0))
        throw new Fault(fieldPath, 'is not a valid field path')
      if (direction !== 1 && direction !== -1) throw new Fault(fieldPath, 'must be 1 or -1')
    }
    optionalBoolean(index.unique, child(path, 'unique'))
  })
}

function cronPattern(value: unknown, path: string): void {
  const pattern = text(value, path)
  const fields = pattern.trim().split(/\s+/).length
  // Five fields, or six with a leading seconds field (DESIGN.md §6); `@daily` and friends too.
  if (!pattern.startsWith('@') && fields !== 5 && fields !== 6)
    throw new Fault(path, 'must have five fields, or six with a leading seconds field')
  try {
    new Cron(pattern, { paused: true })
  } catch (error) {
    throw new Fault(path, `is not a valid cron expression: ${(error as Error).message}`)
  }
}

function timeZone(value: unknown, path: string): void {
  const zone = text(value, path)
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone })
  } catch {
    throw new Fault(path, `is not a known time zone: ${zone}`)
  }
}

export function jobSchedulerBody(body: JsonRecord): void {
  onlyKeys(body, 'modelBody', ['schedules'])
  if (body.schedules === undefined) throw new Fault('modelBody.schedules', 'is required')
  const ids = new Set<string>()
  list(body.schedules, 'modelBody.schedules').forEach((value, position) => {
    const path = child('modelBody.schedules', position)
    const schedule = record(value, path)
    onlyKeys(schedule, path, ['id', 'cron', 'timezone', 'startProcess', 'runFunction'])
    const id = text(schedule.id, child(path, 'id'))
    if (ids.has(id)) throw new Fault(child(path, 'id'), `repeats schedule id "${id}"`)
    ids.add(id)
    cronPattern(schedule.cron, child(path, 'cron'))
    if (schedule.timezone !== undefined) timeZone(schedule.timezone, child(path, 'timezone'))
    if ((schedule.startProcess === undefined) === (schedule.runFunction === undefined))
      throw new Fault(path, 'must have exactly one of startProcess and runFunction')
    if (schedule.startProcess !== undefined) {
      const startPath = child(path, 'startProcess')
      const start = record(schedule.startProcess, startPath)
      onlyKeys(start, startPath, ['processId', 'input', 'initiatorUserId'])
      modelIdLike(start.processId, child(startPath, 'processId'))
      record(start.input, child(startPath, 'input'))
      optionalText(start.initiatorUserId, child(startPath, 'initiatorUserId'))
    } else {
      const runPath = child(path, 'runFunction')
      const run = record(schedule.runFunction, runPath)
      onlyKeys(run, runPath, ['functionId', 'inputParams'])
      text(run.functionId, child(runPath, 'functionId'))
      if (run.inputParams !== undefined) record(run.inputParams, child(runPath, 'inputParams'))
    }
  })
}
