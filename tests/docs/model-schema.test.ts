import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { examplesDir, generatedOpenapiDir } from '../../lib/server/paths.js'
import { createModelSchemaCompiler, validateModel } from '../../model/validation.js'

type Json = Record<string, unknown>

const schema = JSON.parse(readFileSync(join(generatedOpenapiDir, 'model.schema.json'), 'utf8')) as Json
// The service's own strict dialect (unknown keywords and formats refused): the published schema uses
// JSON Schema 2020-12 keywords only, so that any validator reads it.
const validate = createModelSchemaCompiler().compile(schema)

const examples = readdirSync(examplesDir)
  .filter((name) => name.endsWith('.json'))
  .sort()
const example = (name: string): Json => JSON.parse(readFileSync(join(examplesDir, name), 'utf8')) as Json

/** The function ids the app's `functions` models define (examples' processes may call them). */
const appFunctions = new Set(
  examples.flatMap((name) => {
    const model = example(name)
    return model.type === 'functions' ? Object.keys((model.modelBody as { functions: Json }).functions) : []
  }),
)

t.test("every model in examples/ validates against the published model schema and passes the service's model validation", async (t) => {
  t.ok(examples.length >= 8, `examples/ holds the models (${examples.join(', ')})`)
  for (const name of examples) {
    const model = example(name)
    t.ok(validate(model), `${name} matches the schema${validate.errors ? `: ${JSON.stringify(validate.errors)}` : ''}`)
    t.equal(
      validateModel(model as { modelID: unknown; type: unknown; modelBody: unknown }, appFunctions),
      null,
      `${name} passes validateModel`,
    )
  }
})

/** A copy of an example with one change made by `edit`. */
function broken(name: string, edit: (model: Json & { modelBody: Json }) => void): Json {
  const model = structuredClone(example(name)) as Json & { modelBody: Json }
  edit(model)
  return model
}

const steps = (model: { modelBody: Json }) => model.modelBody.steps as Record<string, Json>

const BROKEN: Array<[what: string, model: Json]> = [
  ['a process without its start step', broken('leave-request.json', (model) => delete model.modelBody.start)],
  ['a step of an unknown type', broken('leave-request.json', (model) => (steps(model).approve!.type = 'userTusk'))],
  ['a complete action without next', broken('leave-request.json', (model) => delete (steps(model).approve!.actions as Json[])[0]!.next)],
  [
    'a function action with a next',
    broken('leave-request.json', (model) => ((steps(model).request!.actions as Json[])[2]!.next = 'approve')),
  ],
  ['a user task without actions', broken('leave-request.json', (model) => (steps(model).approve!.actions = []))],
  ['an unknown field in a process body', broken('leave-request.json', (model) => (model.modelBody.deadline = 'P3D'))],
  [
    'a flow node of two kinds',
    broken('hr-lib.json', (model) => {
      const functions = model.modelBody.functions as Record<string, { steps: Json[] }>
      Object.values(functions)[0]!.steps.unshift({ set: { 'vars.x': '1' }, info: "'two kinds'" })
    }),
  ],
  [
    'an http node with an unknown method',
    broken('hr-lib.json', (model) => {
      const functions = model.modelBody.functions as Record<string, { steps: Json[] }>
      Object.values(functions)[0]!.steps.unshift({ http: { method: 'FETCH', url: "'https://example.com'" } })
    }),
  ],
  [
    'a schedule with both startProcess and runFunction',
    broken('hr-nightly.json', (model) => {
      const [schedule] = model.modelBody.schedules as Json[]
      schedule!.startProcess = { processId: 'leave-request', input: {} }
      schedule!.runFunction = { functionId: 'vatOf' }
    }),
  ],
  ['a settings file id with a slash', broken('hr-settings.json', (model) => ((model.modelBody.files as Json)['a/b'] = {}))],
  [
    'a data collection index direction of 2',
    broken('leave-bookings.json', (model) => (model.modelBody.indexes = [{ keys: { userId: 2 } }])),
  ],
  ['a constant that is not a string', broken('hr-constants.json', (model) => (model.modelBody.maxDays = 30))],
  ['a dueIn that is not an ISO-8601 duration', broken('leave-request.json', (model) => (steps(model).approve!.dueIn = '3 days'))],
  [
    'a user task with both dueIn and dueDate',
    broken('leave-request.json', (model) => Object.assign(steps(model).approve!, { dueIn: 'P3D', dueDate: 'data.until' })),
  ],
  [
    'an escalation of an unknown kind',
    broken('leave-request.json', (model) => (steps(model).approve!.escalations = [{ after: 'P1D', do: 'email' }])),
  ],
  [
    'an assignToSwimlane escalation without its swimlane',
    broken('leave-request.json', (model) => (steps(model).approve!.escalations = [{ after: 'P1D', do: 'assignToSwimlane' }])),
  ],
  [
    'a notify escalation with a userId',
    broken(
      'leave-request.json',
      (model) => (steps(model).approve!.escalations = [{ after: 'P1D', do: 'notify', userId: 'process.initiator' }]),
    ),
  ],
  ['a model id with a space', broken('leave-form.json', (model) => (model.modelID = 'leave form'))],
  ['an unknown model type', broken('leave-form.json', (model) => (model.type = 'report'))],
]

t.test("broken variants of the examples are refused by the published schema and by the service's model validation", async (t) => {
  for (const [what, model] of BROKEN) {
    t.notOk(validate(model), `the schema refuses ${what}`)
    t.not(
      validateModel(model as { modelID: unknown; type: unknown; modelBody: unknown }, appFunctions),
      null,
      `validateModel refuses ${what}`,
    )
  }
})

t.test('a user task with a due date and escalations of every kind validates against the published schema', async (t) => {
  const model = broken('leave-request.json', (model) => {
    Object.assign(steps(model).approve!, {
      dueIn: 'P1DT12H',
      escalations: [
        { after: 'PT30M', do: 'notify', note: 'Reminder' },
        { after: 'P1D', do: 'assignToSwimlane', swimlane: 'hr' },
        { after: 'P2D', do: 'assignToUser', userId: 'process.initiator' },
        { after: 'P3D', do: 'action', actionType: 'return' },
      ],
    })
    steps(model).hrReview!.dueDate = "'2026-12-31T17:00:00Z'"
  })
  t.ok(validate(model), JSON.stringify(validate.errors))
  t.equal(validateModel(model as { modelID: unknown; type: unknown; modelBody: unknown }, appFunctions), null)
})
