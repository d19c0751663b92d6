import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
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

interface Variant {
  name: string
  model: string
  edit: (body: Body, model: Example) => void
  path: string
  message: RegExp
}

const variants: Variant[] = [
  // the model itself
  {
    name: 'modelID outside the pattern',
    model: 'leave-form',
    edit: (_body, model) => void (model.modelID = 'has space'),
    path: 'modelID',
    message: /must match/,
  },
  {
    name: 'unknown model type',
    model: 'leave-form',
    edit: (_body, model) => void (model.type = 'workflow'),
    path: 'type',
    message: /must be one of process, form/,
  },
  {
    name: 'modelBody not an object',
    model: 'hr-settings',
    edit: (_body, model) => void (model.modelBody = ['files'] as never),
    path: 'modelBody',
    message: /must be an object/,
  },
  // process: structure
  {
    name: 'unknown top-level field',
    model: 'leave-request',
    edit: (body) => void (body.strat = 'request'),
    path: 'modelBody.strat',
    message: /is not a known field/,
  },
  {
    name: 'missing start',
    model: 'leave-request',
    edit: (body) => void delete body.start,
    path: 'modelBody.start',
    message: /is required/,
  },
  {
    name: 'start names no step',
    model: 'leave-request',
    edit: (body) => void (body.start = 'nowhere'),
    path: 'modelBody.start',
    message: /names step "nowhere"/,
  },
  {
    name: 'no steps',
    model: 'leave-request',
    edit: (body) => void (body.steps = {}),
    path: 'modelBody.steps',
    message: /at least one step/,
  },
  {
    name: 'unknown step type',
    model: 'leave-request',
    edit: (body) => void (body.steps.book.type = 'script'),
    path: 'modelBody.steps.book.type',
    message: /must be one of userTask, function, switch/,
  },
  {
    name: 'unknown step field (typo of next)',
    model: 'leave-request',
    edit: (body) => void (body.steps.joined.nxt = 'done'),
    path: 'modelBody.steps.joined.nxt',
    message: /not a known field/,
  },
  // process: step references
  {
    name: 'function step next',
    model: 'leave-request',
    edit: (body) => void (body.steps.book.next = 'archiv'),
    path: 'modelBody.steps.book.next',
    message: /names step "archiv"/,
  },
  {
    name: 'action next',
    model: 'leave-request',
    edit: (body) => void (body.steps.approve.actions[1].next = 'gone'),
    path: 'modelBody.steps.approve.actions[1].next',
    message: /names step "gone"/,
  },
  {
    name: 'ending action without next',
    model: 'leave-request',
    edit: (body) => void delete body.steps.hrReview.actions[0].next,
    path: 'modelBody.steps.hrReview.actions[0].next',
    message: /required for a complete action/,
  },
  {
    name: 'function action with next',
    model: 'leave-request',
    edit: (body) => void (body.steps.request.actions[2].next = 'approve'),
    path: 'modelBody.steps.request.actions[2].next',
    message: /not allowed on a function action/,
  },
  {
    name: 'function action without function',
    model: 'leave-request',
    edit: (body) => void delete body.steps.request.actions[2].function,
    path: 'modelBody.steps.request.actions[2].function',
    message: /required for a function action/,
  },
  {
    name: 'two actions alike',
    model: 'leave-request',
    edit: (body) => void body.steps.approve.actions.push({ actionType: 'return', next: 'request' }),
    path: 'modelBody.steps.approve.actions[2]',
    message: /repeats actionType "return"/,
  },
  {
    name: 'unknown actionType',
    model: 'leave-request',
    edit: (body) => void (body.steps.approve.actions[0].actionType = 'approve'),
    path: 'modelBody.steps.approve.actions[0].actionType',
    message: /must be one of complete, cancel, return, function/,
  },
  {
    name: 'userTask without actions',
    model: 'leave-request',
    edit: (body) => void (body.steps.hrReview.actions = []),
    path: 'modelBody.steps.hrReview.actions',
    message: /at least 1 item/,
  },
  {
    name: 'switch case next',
    model: 'leave-request',
    edit: (body) => void (body.steps.route.cases[0].next = 'hr'),
    path: 'modelBody.steps.route.cases[0].next',
    message: /names step "hr"/,
  },
  {
    name: 'switch default',
    model: 'leave-request',
    edit: (body) => void (body.steps.route.default = 'bok'),
    path: 'modelBody.steps.route.default',
    message: /names step "bok"/,
  },
  {
    name: 'switch condition defining a function (engine thread)',
    model: 'leave-request',
    edit: (body) => void (body.steps.route.cases[0].when = '( $f := function($n) { $f($n) }; $f(1) )'),
    path: 'modelBody.steps.route.cases[0].when',
    message: /may not use a function definition: expressions of the model run on the engine's thread/,
  },
  {
    name: 'inform header with a range (engine thread)',
    model: 'leave-request',
    edit: (body) => void (body.inform[0].header = '$count([1..10000000])'),
    path: 'modelBody.inform[0].header',
    message: /may not use a range/,
  },
  {
    name: 'businessKey with $pad (engine thread)',
    model: 'leave-request',
    edit: (body) => void (body.businessKey = "$pad('', 20000000)"),
    path: 'modelBody.businessKey',
    message: /may not use \$pad/,
  },
  {
    name: 'switch without default',
    model: 'leave-request',
    edit: (body) => void delete body.steps.route.default,
    path: 'modelBody.steps.route.default',
    message: /non-empty string/,
  },
  {
    name: 'parallel branch',
    model: 'leave-request',
    edit: (body) => void (body.steps.archive.branches[1] = 'informTeem'),
    path: 'modelBody.steps.archive.branches[1]',
    message: /names step "informTeem"/,
  },
  {
    name: 'parallel join is not a join step',
    model: 'leave-request',
    edit: (body) => void (body.steps.archive.join = 'done'),
    path: 'modelBody.steps.archive.join',
    message: /not a join step/,
  },
  {
    name: 'parallel join names no step',
    model: 'leave-request',
    edit: (body) => void (body.steps.archive.join = 'nojoin'),
    path: 'modelBody.steps.archive.join',
    message: /names step "nojoin"/,
  },
  {
    name: 'join next',
    model: 'leave-request',
    edit: (body) => void (body.steps.joined.next = 'fin'),
    path: 'modelBody.steps.joined.next',
    message: /names step "fin"/,
  },
  {
    name: 'end status',
    model: 'leave-request',
    edit: (body) => void (body.steps.done.status = 'finished'),
    path: 'modelBody.steps.done.status',
    message: /completed, cancelled/,
  },
  {
    name: 'end inside a parallel branch',
    model: 'leave-request',
    edit: (body) => void (body.steps.informTeam.next = 'done'),
    path: 'modelBody.steps.archive.branches[1]',
    message: /reaches end step "done" inside the branch/,
  },
  {
    name: 'end inside a branch behind a switch',
    model: 'purchase',
    edit: (body) => {
      body.steps.legal.actions[0].next = 'legalCheck'
      body.steps.legalCheck = { type: 'switch', cases: [{ when: 'data.amount > 1000', next: 'done' }], default: 'joined' }
    },
    path: 'modelBody.steps.approvals.branches[1]',
    message: /reaches end step "done"/,
  },
  {
    name: 'branch that never reaches its join',
    model: 'purchase',
    edit: (body) => {
      body.steps.legal.actions[0].next = 'legal'
    },
    path: 'modelBody.steps.approvals.branches[1]',
    message: /never reaches the join "joined"/,
  },
  // process: swimlanes and functions
  {
    name: 'swimlane reference',
    model: 'leave-request',
    edit: (body) => void (body.steps.approve.swimlane = 'managers'),
    path: 'modelBody.steps.approve.swimlane',
    message: /names swimlane "managers"/,
  },
  {
    name: 'swimlane without name',
    model: 'leave-request',
    edit: (body) => void delete body.swimlanes.hr.name,
    path: 'modelBody.swimlanes.hr.name',
    message: /non-empty string/,
  },
  {
    name: 'step function',
    model: 'leave-request',
    edit: (body) => void (body.steps.book.function = 'bookLeaf'),
    path: 'modelBody.steps.book.function',
    message: /names function "bookLeaf"/,
  },
  {
    name: 'action function',
    model: 'leave-request',
    edit: (body) => void (body.steps.request.actions[2].function = 'balance'),
    path: 'modelBody.steps.request.actions[2].function',
    message: /names function "balance"/,
  },
  {
    name: 'task function',
    model: 'leave-request',
    edit: (body) => void body.steps.request.taskFunctions.push('suggest'),
    path: 'modelBody.steps.request.taskFunctions[1]',
    message: /names function "suggest"/,
  },
  {
    name: 'named function',
    model: 'leave-request',
    edit: (body) => void (body.namedFunctions.getUser = 'findUser'),
    path: 'modelBody.namedFunctions.getUser',
    message: /names function "findUser"/,
  },
  {
    name: 'unknown named function',
    model: 'leave-request',
    edit: (body) => void (body.namedFunctions.onStart = 'logActivity'),
    path: 'modelBody.namedFunctions.onStart',
    message: /not a known field/,
  },
  {
    name: 'file function',
    model: 'leave-request',
    edit: (body) => void (body.fileDownloadFunction = 'serve'),
    path: 'modelBody.fileDownloadFunction',
    message: /names function "serve"/,
  },
  {
    name: 'call of an unknown function',
    model: 'leave-request',
    edit: (body) => void body.functions.informTeam.steps.push({ call: 'notifyAll', as: 'vars.result' }),
    path: 'modelBody.functions.informTeam.steps[1].call',
    message: /names function "notifyAll"/,
  },
  // process: due dates and escalations of user tasks
  {
    name: 'dueIn not a duration',
    model: 'leave-request',
    edit: (body) => void (body.steps.approve.dueIn = '3 days'),
    path: 'modelBody.steps.approve.dueIn',
    message: /must be an ISO-8601 duration such as P3D/,
  },
  {
    name: 'dueIn and dueDate together',
    model: 'leave-request',
    edit: (body) => Object.assign(body.steps.approve, { dueIn: 'P3D', dueDate: 'data.until' }),
    path: 'modelBody.steps.approve.dueDate',
    message: /not allowed with dueIn/,
  },
  {
    name: 'dueDate not an expression',
    model: 'leave-request',
    edit: (body) => void (body.steps.approve.dueDate = 'data.(('),
    path: 'modelBody.steps.approve.dueDate',
    message: /is not a valid expression/,
  },
  {
    name: 'dueDate with a range (engine thread)',
    model: 'leave-request',
    edit: (body) => void (body.steps.approve.dueDate = '$string($count([1..10000000]))'),
    path: 'modelBody.steps.approve.dueDate',
    message: /may not use a range/,
  },
  {
    name: 'escalations empty',
    model: 'leave-request',
    edit: (body) => void (body.steps.approve.escalations = []),
    path: 'modelBody.steps.approve.escalations',
    message: /at least 1 item/,
  },
  {
    name: 'escalation after not a duration',
    model: 'leave-request',
    edit: (body) => void (body.steps.approve.escalations = [{ after: 'PT', do: 'notify' }]),
    path: 'modelBody.steps.approve.escalations[0].after',
    message: /ISO-8601 duration/,
  },
  {
    name: 'escalation of an unknown kind',
    model: 'leave-request',
    edit: (body) => void (body.steps.approve.escalations = [{ after: 'P1D', do: 'email' }]),
    path: 'modelBody.steps.approve.escalations[0].do',
    message: /must be one of notify, assignToSwimlane, assignToUser, action/,
  },
  {
    name: 'escalation to an unknown swimlane',
    model: 'leave-request',
    edit: (body) => void (body.steps.approve.escalations = [{ after: 'P1D', do: 'assignToSwimlane', swimlane: 'board' }]),
    path: 'modelBody.steps.approve.escalations[0].swimlane',
    message: /names swimlane "board"/,
  },
  {
    name: 'escalation to a user without userId',
    model: 'leave-request',
    edit: (body) => void (body.steps.approve.escalations = [{ after: 'P1D', do: 'assignToUser' }]),
    path: 'modelBody.steps.approve.escalations[0].userId',
    message: /is required for do "assignToUser"/,
  },
  {
    name: 'escalation userId not an expression',
    model: 'leave-request',
    edit: (body) => void (body.steps.approve.escalations = [{ after: 'P1D', do: 'assignToUser', userId: '"a" &' }]),
    path: 'modelBody.steps.approve.escalations[0].userId',
    message: /is not a valid expression/,
  },
  {
    name: 'escalation action the step does not have',
    model: 'leave-request',
    edit: (body) => void (body.steps.hrReview.escalations = [{ after: 'P1D', do: 'action', actionType: 'return' }]),
    path: 'modelBody.steps.hrReview.escalations[0].actionType',
    message: /takes action "return", which the step does not have/,
  },
  {
    name: 'escalation action of type function',
    model: 'leave-request',
    edit: (body) => void (body.steps.request.escalations = [{ after: 'P1D', do: 'action', actionType: 'function' }]),
    path: 'modelBody.steps.request.escalations[0].actionType',
    message: /must be one of complete, cancel, return/,
  },
  {
    name: 'escalation field its kind does not use',
    model: 'leave-request',
    edit: (body) => void (body.steps.approve.escalations = [{ after: 'P1D', do: 'notify', swimlane: 'hr' }]),
    path: 'modelBody.steps.approve.escalations[0].swimlane',
    message: /is not allowed with do "notify"/,
  },
  {
    name: 'escalation unknown field',
    model: 'leave-request',
    edit: (body) => void (body.steps.approve.escalations = [{ after: 'P1D', do: 'notify', when: 'true' }]),
    path: 'modelBody.steps.approve.escalations[0].when',
    message: /is not a known field/,
  },
  // process: file function schemas
  {
    name: 'upload input without storageHandle',
    model: 'leave-request',
    edit: (body) => void delete body.functions.acceptFile.input.properties.storageHandle,
    path: 'modelBody.functions.acceptFile.input',
    message: /must declare "storageHandle"/,
  },
  {
    name: 'upload input without fileName',
    model: 'leave-request',
    edit: (body) => void delete body.functions.acceptFile.input.properties.fileName,
    path: 'modelBody.functions.acceptFile.input',
    message: /must declare "fileName"/,
  },
  {
    name: 'upload output without storageHandle',
    model: 'leave-request',
    edit: (body) => void (body.functions.acceptFile.output = { type: 'object' }),
    path: 'modelBody.functions.acceptFile.output',
    message: /must declare "storageHandle"/,
  },
  {
    name: 'download input without storageHandle',
    model: 'leave-request',
    edit: (body) => void (body.functions.serveFile.input = { type: 'object' }),
    path: 'modelBody.functions.serveFile.input',
    message: /must declare "storageHandle"/,
  },
  {
    name: 'delete input without storageHandle',
    model: 'leave-request',
    edit: (body) => void (body.functions.removeFile.input = { type: 'object', properties: {} }),
    path: 'modelBody.functions.removeFile.input',
    message: /must declare "storageHandle"/,
  },
  // process: JSON Schemas
  {
    name: 'input schema with a bad type',
    model: 'leave-request',
    edit: (body) => void (body.input.properties.days.type = 'int'),
    path: 'modelBody.input',
    message: /not a valid JSON Schema/,
  },
  {
    name: 'input schema with an unknown keyword',
    model: 'leave-request',
    edit: (body) => void (body.input.properties.days.minimun = 1),
    path: 'modelBody.input',
    message: /unknown keyword: "minimun"/,
  },
  {
    name: 'function output schema',
    model: 'leave-request',
    edit: (body) => void (body.functions.checkBalance.output.required = 'balanceOk'),
    path: 'modelBody.functions.checkBalance.output',
    message: /not a valid JSON Schema/,
  },
  {
    name: 'schema with an unresolvable $ref',
    model: 'leave-request',
    edit: (body) => void (body.functions.informTeam.input = { $ref: '#/$defs/missing' }),
    path: 'modelBody.functions.informTeam.input',
    message: /not a valid JSON Schema/,
  },
  // process: expressions
  {
    name: 'businessKey',
    model: 'leave-request',
    edit: (body) => void (body.businessKey = "'LR-' & $substring($uuid(), 0, 8"),
    path: 'modelBody.businessKey',
    message: /not a valid expression/,
  },
  {
    name: 'inform header',
    model: 'leave-request',
    edit: (body) => void (body.inform[1].header = 'process.'),
    path: 'modelBody.inform[1].header',
    message: /not a valid expression/,
  },
  {
    name: 'inform without header',
    model: 'leave-request',
    edit: (body) => void delete body.inform[0].header,
    path: 'modelBody.inform[0].header',
    message: /non-empty string/,
  },
  {
    name: 'switch condition',
    model: 'leave-request',
    edit: (body) => void (body.steps.route.cases[0].when = 'data.days >'),
    path: 'modelBody.steps.route.cases[0].when',
    message: /not a valid expression/,
  },
  {
    name: 'assignTo expression',
    model: 'leave-request',
    edit: (body) => void (body.steps.approve.assignTo = 'data.manager[['),
    path: 'modelBody.steps.approve.assignTo',
    message: /not a valid expression/,
  },
  {
    name: 'set value',
    model: 'leave-request',
    edit: (body) => void (body.functions.checkBalance.steps[0].set['output.remaining'] = '20 -'),
    path: 'modelBody.functions.checkBalance.steps[0].set["output.remaining"]',
    message: /not a valid expression/,
  },
  {
    name: 'if condition',
    model: 'leave-request',
    edit: (body) => void (body.functions.updatePayroll.steps[0].if = "$constant('payrollOnline') = "),
    path: 'modelBody.functions.updatePayroll.steps[0].if',
    message: /not a valid expression/,
  },
  {
    name: 'nested then node',
    model: 'leave-request',
    edit: (body) => void (body.functions.checkBalance.steps[1].then[0].info = "'Balance ok"),
    path: 'modelBody.functions.checkBalance.steps[1].then[0].info',
    message: /not a valid expression/,
  },
  {
    name: 'fail message',
    model: 'leave-request',
    edit: (body) => void (body.functions.acceptFile.steps[0].then[0].fail = ')'),
    path: 'modelBody.functions.acceptFile.steps[0].then[0].fail',
    message: /not a valid expression/,
  },
  {
    name: 'data doc',
    model: 'leave-request',
    edit: (body) => void (body.functions.bookLeave.steps[1].doc = '{ "a": }'),
    path: 'modelBody.functions.bookLeave.steps[1].doc',
    message: /not a valid expression/,
  },
  {
    name: 'http url',
    model: 'leave-request',
    edit: (body) => void body.functions.informTeam.steps.push({ http: { method: 'POST', url: "'https://x' &" }, as: 'vars.answer' }),
    path: 'modelBody.functions.informTeam.steps[1].http.url',
    message: /not a valid expression/,
  },
  // process: flow nodes
  {
    name: 'set into a read-only part of the store',
    model: 'leave-request',
    edit: (body) => void (body.functions.informTeam.steps[0].set = { 'process.businessKey': "'x'" }),
    path: 'modelBody.functions.informTeam.steps[0].set["process.businessKey"]',
    message: /must start with data, output or vars/,
  },
  {
    name: 'set through __proto__',
    model: 'leave-request',
    edit: (body) => void (body.functions.informTeam.steps[0].set = { 'data.__proto__.polluted': 'true' }),
    path: 'modelBody.functions.informTeam.steps[0].set["data.__proto__.polluted"]',
    message: /must not use the segment "__proto__"/,
  },
  {
    name: 'node with two kinds',
    model: 'leave-request',
    edit: (body) => void (body.functions.informTeam.steps[0].info = "'x'"),
    path: 'modelBody.functions.informTeam.steps[0]',
    message: /exactly one of .* \(has set, info\)/,
  },
  {
    name: 'node of no kind',
    model: 'leave-request',
    edit: (body) => void body.functions.informTeam.steps.push({ log: "'x'" }),
    path: 'modelBody.functions.informTeam.steps[1]',
    message: /must have exactly one of set, if, http/,
  },
  {
    name: 'http method',
    model: 'leave-request',
    edit: (body) => void body.functions.informTeam.steps.push({ http: { method: 'FETCH', url: "'https://x'" } }),
    path: 'modelBody.functions.informTeam.steps[1].http.method',
    message: /must be one of GET/,
  },
  {
    name: 'data update without set',
    model: 'leave-request',
    edit: (body) => void body.functions.informTeam.steps.push({ data: 'update', collection: 'Leave bookings', filter: '{}' }),
    path: 'modelBody.functions.informTeam.steps[1].set',
    message: /required for a update/,
  },
  {
    name: 'data insert with a filter',
    model: 'leave-request',
    edit: (body) => void (body.functions.bookLeave.steps[1].filter = '{}'),
    path: 'modelBody.functions.bookLeave.steps[1].filter',
    message: /not used by a insert/,
  },
  {
    name: 'function without steps',
    model: 'leave-request',
    edit: (body) => void delete body.functions.serveFile.steps,
    path: 'modelBody.functions.serveFile.steps',
    message: /is required/,
  },
  {
    name: 'as into a read-only path',
    model: 'leave-request',
    edit: (body) => void body.functions.informTeam.steps.push({ call: 'checkBalance', as: 'user.balance' }),
    path: 'modelBody.functions.informTeam.steps[1].as',
    message: /must start with data, output or vars/,
  },
  // other model types
  {
    name: 'settings without files',
    model: 'hr-settings',
    edit: (body) => void delete body.files,
    path: 'modelBody.files',
    message: /is required/,
  },
  {
    name: 'settings file id',
    model: 'hr-settings',
    edit: (body) => void (body.files['bad id!'] = {}),
    path: 'modelBody.files["bad id!"]',
    message: /file id must match/,
  },
  {
    name: 'constant that is not a string',
    model: 'hr-constants',
    edit: (body) => void (body.vatRate = 0.2),
    path: 'modelBody.vatRate',
    message: /must be a string/,
  },
  {
    name: 'functions without functions',
    model: 'hr-lib',
    edit: (body) => void (body.functions = []),
    path: 'modelBody.functions',
    message: /must be an object/,
  },
  {
    name: 'functions model expression',
    model: 'hr-lib',
    edit: (body) => void (body.functions.vatOf.steps[0].set['output.vat'] = '$number(input.amount'),
    path: 'modelBody.functions.vatOf.steps[0].set["output.vat"]',
    message: /not a valid expression/,
  },
  {
    name: 'functions model schema',
    model: 'hr-lib',
    edit: (body) => void (body.functions.vatOf.input.properties.amount.type = 'num'),
    path: 'modelBody.functions.vatOf.input',
    message: /not a valid JSON Schema/,
  },
  {
    name: 'dataCollection without name',
    model: 'leave-bookings',
    edit: (body) => void delete body.name,
    path: 'modelBody.name',
    message: /non-empty string/,
  },
  {
    name: 'dataCollection index direction',
    model: 'leave-bookings',
    edit: (body) => void (body.indexes[0].keys.businessKey = 'asc'),
    path: 'modelBody.indexes[0].keys.businessKey',
    message: /must be 1 or -1/,
  },
  {
    name: 'dataCollection index field',
    model: 'leave-bookings',
    edit: (body) => void (body.indexes[0].keys = { $where: 1 }),
    path: 'modelBody.indexes[0].keys.$where',
    message: /not a valid field path/,
  },
  {
    name: 'jobScheduler cron',
    model: 'hr-nightly',
    edit: (body) => void (body.schedules[0].cron = '0 25 * * *'),
    path: 'modelBody.schedules[0].cron',
    message: /not a valid cron expression/,
  },
  {
    name: 'jobScheduler cron with seven fields',
    model: 'hr-nightly',
    edit: (body) => void (body.schedules[0].cron = '0 0 6 * * * 2030'),
    path: 'modelBody.schedules[0].cron',
    message: /five fields, or six/,
  },
  {
    name: 'jobScheduler time zone',
    model: 'hr-nightly',
    edit: (body) => void (body.schedules[0].timezone = 'Mars/Olympus'),
    path: 'modelBody.schedules[0].timezone',
    message: /not a known time zone/,
  },
  {
    name: 'jobScheduler schedule with neither action',
    model: 'hr-nightly',
    edit: (body) => void delete body.schedules[0].runFunction,
    path: 'modelBody.schedules[0]',
    message: /exactly one of startProcess and runFunction/,
  },
  {
    name: 'jobScheduler duplicate id',
    model: 'hr-nightly',
    edit: (body) => void body.schedules.push({ ...body.schedules[0] }),
    path: 'modelBody.schedules[1].id',
    message: /repeats schedule id "vat-check"/,
  },
  {
    name: 'jobScheduler startProcess without input',
    model: 'hr-nightly',
    edit: (body) => void (body.schedules[0] = { id: 'x', cron: '0 6 * * *', startProcess: { processId: 'leave-request' } }),
    path: 'modelBody.schedules[0].startProcess.input',
    message: /must be an object/,
  },
]

t.test('each fault of a broken variant is reported with its path', async (t) => {
  for (const variant of variants) {
    const model = example(variant.model)
    variant.edit(model.modelBody as Body, model)
    const fault = validateModel(model, appFunctions)
    t.equal(fault?.path, variant.path, `${variant.name}: path`)
    t.match(fault?.message, variant.message, `${variant.name}: message`)
  }
})

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

t.test('a data update node as MODEL.md gives it (its own set, filter and upsert) is valid', async (t) => {
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
