import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { examplesDir } from '../lib/server/paths.js'
import { type ModelToValidate, validateModel } from './validation.js'

const EXAMPLES_DIR = examplesDir

type Example = ModelToValidate & { modelBody: Record<string, unknown> }
/** Variants reach deep into the example bodies, whose shapes the validator itself is about to check. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above: the validator is what checks these shapes
type Body = Record<string, any>

function example(name: string): Example {
  return JSON.parse(readFileSync(join(EXAMPLES_DIR, `${name}.json`), 'utf8')) as Example
}

/** The function ids of the examples' `functions` models: what a process of the same app may call. */
const appFunctions = new Set(
  readdirSync(EXAMPLES_DIR)
    .map((file) => example(file.replace(/\.json$/, '')))
    .filter((model) => model.type === 'functions')
    .flatMap((model) => Object.keys((model.modelBody as { functions: Record<string, unknown> }).functions)),
)

t.test('every example model is valid', async (t) => {
  const files = readdirSync(EXAMPLES_DIR).filter((file) => file.endsWith('.json'))
  t.ok(files.length >= 8, 'the examples are there')
  for (const file of files) t.equal(validateModel(example(file.replace(/\.json$/, '')), appFunctions), null, file)
})

t.test('a function reference resolves in the model or in knownAppFunctions, and is rejected when in neither', async (t) => {
  t.same(validateModel(example('purchase')), {
    path: 'modelBody.steps.order.function',
    message: 'names function "vatOf", which is neither defined in this model nor in a functions model of the app',
  })
  t.equal(validateModel(example('purchase'), new Set(['vatOf'])), null)
})

/** [what is broken, the edit that breaks it, the path of the fault, what the fault says] */
type Fault<Target> = [name: string, edit: (target: Target) => unknown, path: string, message: RegExp]

/** Faults of the model around its body: the path is a field of the model itself. */
const modelFaults: Record<string, Fault<Example>[]> = {
  'leave-form': [
    ['modelID outside the pattern', (model) => (model.modelID = 'has space'), 'modelID', /must match/],
    ['unknown model type', (model) => (model.type = 'workflow'), 'type', /must be one of process, form/],
  ],
  // a settings body must be an object, where a form body may be any JSON value
  'hr-settings': [['modelBody not an object', (model) => (model.modelBody = ['files'] as never), 'modelBody', /must be an object/]],
}

/** Faults inside the body of each example model: the path is below `modelBody`. */
/** An externalTask step in place of the booking function, changed by `edit`. */
function withExternalTask(body: Body, edit: (step: Record<string, unknown>) => void): void {
  const step: Record<string, unknown> = { type: 'externalTask', topic: 'payroll', next: 'archive' }
  edit(step)
  body.steps.book = step
}

function externalTaskFaults(): Fault<Body>[] {
  return [
    ['external task without topic', (body) => withExternalTask(body, (step) => delete step.topic), 'steps.book.topic', /is required/],
    [
      'external task topic with spaces',
      (body) => withExternalTask(body, (step) => (step.topic = 'pay roll')),
      'steps.book.topic',
      /must match/,
    ],
    ['external task next', (body) => withExternalTask(body, (step) => (step.next = 'archiv')), 'steps.book.next', /names step "archiv"/],
    ['external task input', (body) => withExternalTask(body, (step) => (step.input = 'data.(')), 'steps.book.input', /./],
    [
      'external task as outside data',
      (body) => withExternalTask(body, (step) => (step.as = 'vars.x')),
      'steps.book.as',
      /must be data or start with data/,
    ],
    [
      'external task as to a prototype',
      (body) => withExternalTask(body, (step) => (step.as = 'data.__proto__')),
      'steps.book.as',
      /__proto__/,
    ],
    ['external task retries', (body) => withExternalTask(body, (step) => (step.retries = -1)), 'steps.book.retries', /./],
    [
      'external task onError',
      (body) => withExternalTask(body, (step) => (step.onError = 'ignore')),
      'steps.book.onError',
      /fail, rollback/,
    ],
    [
      'external task unknown field',
      (body) => withExternalTask(body, (step) => (step.lockDuration = 5)),
      'steps.book.lockDuration',
      /not a known field/,
    ],
  ]
}

const bodyFaults: Record<string, Fault<Body>[]> = {
  'leave-request': [
    // process: structure
    ['unknown top-level field', (body) => (body.strat = 'request'), 'strat', /is not a known field/],
    ['missing start', (body) => delete body.start, 'start', /is required/],
    ['start names no step', (body) => (body.start = 'nowhere'), 'start', /names step "nowhere"/],
    ['no steps', (body) => (body.steps = {}), 'steps', /at least one step/],
    ['unknown step type', (body) => (body.steps.book.type = 'script'), 'steps.book.type', /must be one of userTask, function, switch/],
    ['unknown step field (typo of next)', (body) => (body.steps.joined.nxt = 'done'), 'steps.joined.nxt', /not a known field/],
    // process: external tasks
    ...externalTaskFaults(),
    // process: step references
    ['function step next', (body) => (body.steps.book.next = 'archiv'), 'steps.book.next', /names step "archiv"/],
    ['action next', (body) => (body.steps.approve.actions[1].next = 'gone'), 'steps.approve.actions[1].next', /names step "gone"/],
    [
      'ending action without next',
      (body) => delete body.steps.hrReview.actions[0].next,
      'steps.hrReview.actions[0].next',
      /required for a complete action/,
    ],
    [
      'function action with next',
      (body) => (body.steps.request.actions[2].next = 'approve'),
      'steps.request.actions[2].next',
      /not allowed on a function action/,
    ],
    [
      'function action without function',
      (body) => delete body.steps.request.actions[2].function,
      'steps.request.actions[2].function',
      /required for a function action/,
    ],
    [
      'two actions alike',
      (body) => body.steps.approve.actions.push({ actionType: 'return', next: 'request' }),
      'steps.approve.actions[3]',
      /repeats actionType "return"/,
    ],
    [
      'unknown actionType',
      (body) => (body.steps.approve.actions[0].actionType = 'approve'),
      'steps.approve.actions[0].actionType',
      /must be one of complete, cancel, return, function/,
    ],
    ['userTask without actions', (body) => (body.steps.hrReview.actions = []), 'steps.hrReview.actions', /at least 1 item/],
    ['switch case next', (body) => (body.steps.route.cases[0].next = 'hr'), 'steps.route.cases[0].next', /names step "hr"/],
    ['switch default', (body) => (body.steps.route.default = 'bok'), 'steps.route.default', /names step "bok"/],
    [
      'switch condition defining a function (engine thread)',
      (body) => (body.steps.route.cases[0].when = '( $f := function($n) { $f($n) }; $f(1) )'),
      'steps.route.cases[0].when',
      /may not use a function definition: expressions of the model run on the engine's thread/,
    ],
    [
      'inform header with a range (engine thread)',
      (body) => (body.inform[0].header = '$count([1..10000000])'),
      'inform[0].header',
      /may not use a range/,
    ],
    ['businessKey with $pad (engine thread)', (body) => (body.businessKey = "$pad('', 20000000)"), 'businessKey', /may not use \$pad/],
    ['switch without default', (body) => delete body.steps.route.default, 'steps.route.default', /non-empty string/],
    ['parallel branch', (body) => (body.steps.archive.branches[1] = 'informTeem'), 'steps.archive.branches[1]', /names step "informTeem"/],
    ['parallel join is not a join step', (body) => (body.steps.archive.join = 'done'), 'steps.archive.join', /not a join step/],
    ['parallel join names no step', (body) => (body.steps.archive.join = 'nojoin'), 'steps.archive.join', /names step "nojoin"/],
    ['join next', (body) => (body.steps.joined.next = 'fin'), 'steps.joined.next', /names step "fin"/],
    ['end status', (body) => (body.steps.done.status = 'finished'), 'steps.done.status', /completed, cancelled/],
    [
      'end inside a parallel branch',
      (body) => (body.steps.informTeam.next = 'done'),
      'steps.archive.branches[1]',
      /reaches end step "done" inside the branch/,
    ],
    // process: swimlanes and functions
    ['swimlane reference', (body) => (body.steps.approve.swimlane = 'managers'), 'steps.approve.swimlane', /names swimlane "managers"/],
    ['swimlane without name', (body) => delete body.swimlanes.hr.name, 'swimlanes.hr.name', /non-empty string/],
    ['step function', (body) => (body.steps.book.function = 'bookLeaf'), 'steps.book.function', /names function "bookLeaf"/],
    [
      'action function',
      (body) => (body.steps.request.actions[2].function = 'balance'),
      'steps.request.actions[2].function',
      /names function "balance"/,
    ],
    [
      'task function',
      (body) => body.steps.request.taskFunctions.push('suggest'),
      'steps.request.taskFunctions[1]',
      /names function "suggest"/,
    ],
    ['named function', (body) => (body.namedFunctions.getUser = 'findUser'), 'namedFunctions.getUser', /names function "findUser"/],
    ['unknown named function', (body) => (body.namedFunctions.onStart = 'logActivity'), 'namedFunctions.onStart', /not a known field/],
    ['file function', (body) => (body.fileDownloadFunction = 'serve'), 'fileDownloadFunction', /names function "serve"/],
    [
      'call of an unknown function',
      (body) => body.functions.informTeam.steps.push({ call: 'notifyAll', as: 'vars.result' }),
      'functions.informTeam.steps[1].call',
      /names function "notifyAll"/,
    ],
    // process: due dates and escalations of user tasks
    [
      'dueIn not a duration',
      (body) => (body.steps.approve.dueIn = '3 days'),
      'steps.approve.dueIn',
      /must be an ISO-8601 duration such as P3D/,
    ],
    [
      'dueIn and dueDate together',
      (body) => Object.assign(body.steps.approve, { dueIn: 'P3D', dueDate: 'data.until' }),
      'steps.approve.dueDate',
      /not allowed with dueIn/,
    ],
    ['dueDate not an expression', (body) => (body.steps.approve.dueDate = 'data.(('), 'steps.approve.dueDate', /is not a valid expression/],
    [
      'dueDate with a range (engine thread)',
      (body) => (body.steps.approve.dueDate = '$string($count([1..10000000]))'),
      'steps.approve.dueDate',
      /may not use a range/,
    ],
    ['escalations empty', (body) => (body.steps.approve.escalations = []), 'steps.approve.escalations', /at least 1 item/],
    [
      'escalation after not a duration',
      (body) => (body.steps.approve.escalations = [{ after: 'PT', do: 'notify' }]),
      'steps.approve.escalations[0].after',
      /ISO-8601 duration/,
    ],
    [
      'escalation of an unknown kind',
      (body) => (body.steps.approve.escalations = [{ after: 'P1D', do: 'email' }]),
      'steps.approve.escalations[0].do',
      /must be one of notify, assignToSwimlane, assignToUser, action/,
    ],
    [
      'escalation to an unknown swimlane',
      (body) => (body.steps.approve.escalations = [{ after: 'P1D', do: 'assignToSwimlane', swimlane: 'board' }]),
      'steps.approve.escalations[0].swimlane',
      /names swimlane "board"/,
    ],
    [
      'escalation to a user without userId',
      (body) => (body.steps.approve.escalations = [{ after: 'P1D', do: 'assignToUser' }]),
      'steps.approve.escalations[0].userId',
      /is required for do "assignToUser"/,
    ],
    [
      'escalation userId not an expression',
      (body) => (body.steps.approve.escalations = [{ after: 'P1D', do: 'assignToUser', userId: '"a" &' }]),
      'steps.approve.escalations[0].userId',
      /is not a valid expression/,
    ],
    [
      'escalation action the step does not have',
      (body) => (body.steps.hrReview.escalations = [{ after: 'P1D', do: 'action', actionType: 'return' }]),
      'steps.hrReview.escalations[0].actionType',
      /takes action "return", which the step does not have/,
    ],
    [
      'escalation action of type function',
      (body) => (body.steps.request.escalations = [{ after: 'P1D', do: 'action', actionType: 'function' }]),
      'steps.request.escalations[0].actionType',
      /must be one of complete, cancel, return/,
    ],
    [
      'escalation field its kind does not use',
      (body) => (body.steps.approve.escalations = [{ after: 'P1D', do: 'notify', swimlane: 'hr' }]),
      'steps.approve.escalations[0].swimlane',
      /is not allowed with do "notify"/,
    ],
    [
      'escalation unknown field',
      (body) => (body.steps.approve.escalations = [{ after: 'P1D', do: 'notify', when: 'true' }]),
      'steps.approve.escalations[0].when',
      /is not a known field/,
    ],
    // process: file function schemas
    [
      'upload input without storageHandle',
      (body) => delete body.functions.acceptFile.input.properties.storageHandle,
      'functions.acceptFile.input',
      /must declare "storageHandle"/,
    ],
    [
      'upload input without fileName',
      (body) => delete body.functions.acceptFile.input.properties.fileName,
      'functions.acceptFile.input',
      /must declare "fileName"/,
    ],
    [
      'upload output without storageHandle',
      (body) => (body.functions.acceptFile.output = { type: 'object' }),
      'functions.acceptFile.output',
      /must declare "storageHandle"/,
    ],
    [
      'download input without storageHandle',
      (body) => (body.functions.serveFile.input = { type: 'object' }),
      'functions.serveFile.input',
      /must declare "storageHandle"/,
    ],
    [
      'delete input without storageHandle',
      (body) => (body.functions.removeFile.input = { type: 'object', properties: {} }),
      'functions.removeFile.input',
      /must declare "storageHandle"/,
    ],
    // process: JSON Schemas
    ['input schema with a bad type', (body) => (body.input.properties.days.type = 'int'), 'input', /not a valid JSON Schema/],
    ['input schema with an unknown keyword', (body) => (body.input.properties.days.minimun = 1), 'input', /unknown keyword: "minimun"/],
    [
      'function output schema',
      (body) => (body.functions.checkBalance.output.required = 'balanceOk'),
      'functions.checkBalance.output',
      /not a valid JSON Schema/,
    ],
    [
      'schema with an unresolvable $ref',
      (body) => (body.functions.informTeam.input = { $ref: '#/$defs/missing' }),
      'functions.informTeam.input',
      /not a valid JSON Schema/,
    ],
    // process: expressions
    ['businessKey', (body) => (body.businessKey = "'LR-' & $substring($uuid(), 0, 8"), 'businessKey', /not a valid expression/],
    ['inform header', (body) => (body.inform[1].header = 'process.'), 'inform[1].header', /not a valid expression/],
    ['inform without header', (body) => delete body.inform[0].header, 'inform[0].header', /non-empty string/],
    ['switch condition', (body) => (body.steps.route.cases[0].when = 'data.days >'), 'steps.route.cases[0].when', /not a valid expression/],
    ['assignTo expression', (body) => (body.steps.approve.assignTo = 'data.manager[['), 'steps.approve.assignTo', /not a valid expression/],
    [
      'set value',
      (body) => (body.functions.checkBalance.steps[0].set['output.remaining'] = '20 -'),
      'functions.checkBalance.steps[0].set["output.remaining"]',
      /not a valid expression/,
    ],
    [
      'if condition',
      (body) => (body.functions.updatePayroll.steps[0].if = "$constant('payrollOnline') = "),
      'functions.updatePayroll.steps[0].if',
      /not a valid expression/,
    ],
    [
      'nested then node',
      (body) => (body.functions.checkBalance.steps[1].then[0].info = "'Balance ok"),
      'functions.checkBalance.steps[1].then[0].info',
      /not a valid expression/,
    ],
    [
      'fail message',
      (body) => (body.functions.acceptFile.steps[0].then[0].fail = ')'),
      'functions.acceptFile.steps[0].then[0].fail',
      /not a valid expression/,
    ],
    [
      'data doc',
      (body) => (body.functions.bookLeave.steps[1].doc = '{ "a": }'),
      'functions.bookLeave.steps[1].doc',
      /not a valid expression/,
    ],
    [
      'http url',
      (body) => body.functions.informTeam.steps.push({ http: { method: 'POST', url: "'https://x' &" }, as: 'vars.answer' }),
      'functions.informTeam.steps[1].http.url',
      /not a valid expression/,
    ],
    // process: flow nodes
    [
      'set into a read-only part of the store',
      (body) => (body.functions.informTeam.steps[0].set = { 'process.businessKey': "'x'" }),
      'functions.informTeam.steps[0].set["process.businessKey"]',
      /must start with data, output or vars/,
    ],
    [
      'set through __proto__',
      (body) => (body.functions.informTeam.steps[0].set = { 'data.__proto__.polluted': 'true' }),
      'functions.informTeam.steps[0].set["data.__proto__.polluted"]',
      /must not use the segment "__proto__"/,
    ],
    [
      'node with two kinds',
      (body) => (body.functions.informTeam.steps[0].info = "'x'"),
      'functions.informTeam.steps[0]',
      /exactly one of .* \(has set, info\)/,
    ],
    [
      'node of no kind',
      (body) => body.functions.informTeam.steps.push({ log: "'x'" }),
      'functions.informTeam.steps[1]',
      /must have exactly one of set, if, http/,
    ],
    [
      'http method',
      (body) => body.functions.informTeam.steps.push({ http: { method: 'FETCH', url: "'https://x'" } }),
      'functions.informTeam.steps[1].http.method',
      /must be one of GET/,
    ],
    [
      'data update without set',
      (body) => body.functions.informTeam.steps.push({ data: 'update', collection: 'Leave bookings', filter: '{}' }),
      'functions.informTeam.steps[1].set',
      /required for a update/,
    ],
    [
      'data insert with a filter',
      (body) => (body.functions.bookLeave.steps[1].filter = '{}'),
      'functions.bookLeave.steps[1].filter',
      /not used by a insert/,
    ],
    ['function without steps', (body) => delete body.functions.serveFile.steps, 'functions.serveFile.steps', /is required/],
    [
      'as into a read-only path',
      (body) => body.functions.informTeam.steps.push({ call: 'checkBalance', as: 'user.balance' }),
      'functions.informTeam.steps[1].as',
      /must start with data, output or vars/,
    ],
  ],
  purchase: [
    // process: parallel branches that leave their join
    [
      'end inside a branch behind a switch',
      (body) => {
        body.steps.legal.actions[0].next = 'legalCheck'
        body.steps.legalCheck = { type: 'switch', cases: [{ when: 'data.amount > 1000', next: 'done' }], default: 'joined' }
      },
      'steps.approvals.branches[1]',
      /reaches end step "done"/,
    ],
    [
      'branch that never reaches its join',
      (body) => (body.steps.legal.actions[0].next = 'legal'),
      'steps.approvals.branches[1]',
      /never reaches the join "joined"/,
    ],
  ],
  // other model types
  'hr-settings': [
    ['settings without files', (body) => delete body.files, 'files', /is required/],
    ['settings file id', (body) => (body.files['bad id!'] = {}), 'files["bad id!"]', /file id must match/],
  ],
  'hr-constants': [['constant that is not a string', (body) => (body.vatRate = 0.2), 'vatRate', /must be a string/]],
  'hr-lib': [
    ['functions without functions', (body) => (body.functions = []), 'functions', /must be an object/],
    [
      'functions model expression',
      (body) => (body.functions.vatOf.steps[0].set['output.vat'] = '$number(input.amount'),
      'functions.vatOf.steps[0].set["output.vat"]',
      /not a valid expression/,
    ],
    [
      'functions model schema',
      (body) => (body.functions.vatOf.input.properties.amount.type = 'num'),
      'functions.vatOf.input',
      /not a valid JSON Schema/,
    ],
  ],
  'leave-bookings': [
    ['dataCollection without name', (body) => delete body.name, 'name', /non-empty string/],
    [
      'dataCollection index direction',
      (body) => (body.indexes[0].keys.businessKey = 'asc'),
      'indexes[0].keys.businessKey',
      /must be 1 or -1/,
    ],
    ['dataCollection index field', (body) => (body.indexes[0].keys = { $where: 1 }), 'indexes[0].keys.$where', /not a valid field path/],
  ],
  'hr-nightly': [
    ['jobScheduler cron', (body) => (body.schedules[0].cron = '0 25 * * *'), 'schedules[0].cron', /not a valid cron expression/],
    [
      'jobScheduler cron with seven fields',
      (body) => (body.schedules[0].cron = '0 0 6 * * * 2030'),
      'schedules[0].cron',
      /five fields, or six/,
    ],
    ['jobScheduler time zone', (body) => (body.schedules[0].timezone = 'Mars/Olympus'), 'schedules[0].timezone', /not a known time zone/],
    [
      'jobScheduler schedule with neither action',
      (body) => delete body.schedules[0].runFunction,
      'schedules[0]',
      /exactly one of startProcess and runFunction/,
    ],
    [
      'jobScheduler duplicate id',
      (body) => body.schedules.push({ ...body.schedules[0] }),
      'schedules[1].id',
      /repeats schedule id "vat-check"/,
    ],
    [
      'jobScheduler startProcess without input',
      (body) => (body.schedules[0] = { id: 'x', cron: '0 6 * * *', startProcess: { processId: 'leave-request' } }),
      'schedules[0].startProcess.input',
      /must be an object/,
    ],
  ],
}

/** Breaks a fresh copy of the named example as each fault says, and expects the validator to report that fault. */
function expectEachFault<Target>(
  t: Test,
  faultsByExample: Record<string, Fault<Target>[]>,
  target: (model: Example) => Target,
  pathPrefix: string,
): void {
  for (const [exampleName, faults] of Object.entries(faultsByExample)) {
    for (const [name, edit, path, message] of faults) {
      const model = example(exampleName)
      edit(target(model))
      const fault = validateModel(model, appFunctions)
      t.equal(fault?.path, pathPrefix + path, `${name}: path`)
      t.match(fault?.message, message, `${name}: message`)
    }
  }
}

t.test('each fault of a broken model is reported with its path', async (t) => expectEachFault(t, modelFaults, (model) => model, ''))

t.test('each fault of a broken body is reported with its path below modelBody', async (t) =>
  expectEachFault(t, bodyFaults, (model) => model.modelBody as Body, 'modelBody.'),
)

t.test('a schema with an $id can be validated again (the compiler keeps no schema between calls)', async (t) => {
  const model = example('leave-request')
  ;(model.modelBody as Body).input.$id = 'https://example.org/leave-input'
  t.equal(validateModel(model, appFunctions), null)
  t.equal(validateModel(model, appFunctions), null)
})

t.test('a form body may be any JSON value', async (t) => {
  t.equal(validateModel({ modelID: 'f', type: 'form', modelBody: [1, 2] }), null)
  t.same(validateModel({ modelID: 'f', type: 'form', modelBody: undefined }), { path: 'modelBody', message: 'is required' })
})

t.test('a data update node as docs/models.md gives it (its own set, filter and upsert) is valid', async (t) => {
  const model = example('leave-request')
  const body = model.modelBody as Body
  body.functions.informTeam.steps.push({
    data: 'update',
    collection: 'Leave bookings',
    filter: "{ 'businessKey': process.businessKey }",
    set: "{ 'days': data.days }",
    upsert: 'true',
    as: 'vars.updated',
  })
  t.equal(validateModel(model, appFunctions), null)
  body.functions.informTeam.steps.push({ data: 'find', collection: 'Leave bookings', set: '{}' })
  t.match(
    validateModel(model, appFunctions),
    { path: 'modelBody.functions.informTeam.steps[2].set', message: /not used by a find/ },
    'a set on another data operation is still refused',
  )
})

t.test('user tasks with a dueIn or dueDate and an escalation of every kind are valid', async (t) => {
  const model = example('leave-request')
  const body = model.modelBody as Body
  body.steps.approve.dueIn = 'P3D'
  body.steps.approve.escalations = [
    { after: 'P1D', do: 'notify', note: 'Reminder' },
    { after: 'P2D', do: 'assignToSwimlane', swimlane: 'hr' },
    { after: 'P3D', do: 'assignToUser', userId: 'process.initiator' },
    { after: 'P4D', do: 'action' },
    { after: 'P5D', do: 'action', actionType: 'return' },
  ]
  body.steps.hrReview.dueDate = '$fromMillis($toMillis(process.processStart) + 86400000)'
  t.equal(validateModel(model, appFunctions), null)
})

t.test('timer, receive and callProcess steps are valid as docs/models.md gives them, and their faults have paths', async (t) => {
  const valid = (): Example => {
    const model = example('leave-request')
    const body = model.modelBody as Body
    body.steps.wait = { type: 'timer', duration: 'P3D', next: 'approve' }
    body.steps.waitUntil = { type: 'timer', until: '$fromMillis($toMillis(process.processStart) + 86400000)', next: 'approve' }
    body.steps.payment = {
      type: 'receive',
      message: 'paymentReceived',
      correlate: "'order-' & data.days",
      as: 'data.payment',
      next: 'approve',
      timeout: { after: 'PT12H', next: 'cancelled' },
    }
    body.steps.sub = {
      type: 'callProcess',
      processId: 'purchase',
      version: 2,
      input: '{ "item": data.reason }',
      as: 'data.order',
      next: 'approve',
      onChildFailure: 'continue',
    }
    body.steps.done.output = '{ "days": data.days }'
    return model
  }
  t.equal(validateModel(valid(), appFunctions), null)
  const faults: Array<[edit: (body: Body) => unknown, path: string, message: RegExp]> = [
    [(body) => (body.steps.wait.until = 'now()'), 'modelBody.steps.wait', /exactly one of duration and until/],
    [(body) => delete body.steps.wait.duration, 'modelBody.steps.wait', /exactly one of duration and until/],
    [(body) => (body.steps.wait.duration = '3 days'), 'modelBody.steps.wait.duration', /ISO-8601 duration/],
    [(body) => (body.steps.wait.duration = 'PT'), 'modelBody.steps.wait.duration', /ISO-8601 duration/],
    [(body) => (body.steps.waitUntil.until = '$$$('), 'modelBody.steps.waitUntil.until', /not a valid expression/],
    [(body) => (body.steps.wait.next = 'nowhere'), 'modelBody.steps.wait.next', /names step "nowhere"/],
    [(body) => delete body.steps.payment.message, 'modelBody.steps.payment.message', /is required|non-empty string/],
    [(body) => (body.steps.payment.as = 'vars.x'), 'modelBody.steps.payment.as', /must be data or start with data/],
    [(body) => (body.steps.payment.as = 'data.__proto__'), 'modelBody.steps.payment.as', /must not use the segment/],
    [(body) => (body.steps.payment.timeout.next = 'gone'), 'modelBody.steps.payment.timeout.next', /names step "gone"/],
    [(body) => (body.steps.payment.correlate = 'data.(('), 'modelBody.steps.payment.correlate', /not a valid expression/],
    [(body) => delete body.steps.sub.input, 'modelBody.steps.sub.input', /is required|non-empty string/],
    [(body) => (body.steps.sub.processId = 'has space'), 'modelBody.steps.sub.processId', /must match/],
    [(body) => (body.steps.sub.onChildFailure = 'ignore'), 'modelBody.steps.sub.onChildFailure', /must be one of fail, continue/],
    [(body) => (body.steps.sub.version = 0), 'modelBody.steps.sub.version', /must be/],
    [(body) => (body.steps.done.output = '{'), 'modelBody.steps.done.output', /not a valid expression/],
  ]
  for (const [edit, path, message] of faults) {
    const model = valid()
    edit(model.modelBody as Body)
    const fault = validateModel(model, appFunctions)
    t.equal(fault?.path, path, `${path}: path`)
    t.match(fault?.message, message, `${path}: ${fault?.message}`)
  }
})
