import t from 'tap'
import { engineErrorCatalogue } from '../../../openapi/generated/errors.js'
import { type ErrorCatalogue, errorFactory } from '../../../plugins/errors/service-error.js'
import { RuntimeError } from '../../../runtime/types.js'
import { runtimeCall, runtimeFailure } from './runtime-errors.js'

const fail = errorFactory(engineErrorCatalogue as ErrorCatalogue)

t.test('advancing: business failures are 400, a task not open or an action not offered their own codes, the rest 500 wm3050', async (t) => {
  const cases: Array<[RuntimeError, string, number]> = [
    [new RuntimeError('business', 'Payroll system is offline', { code: 'PAYROLL_OFFLINE' }), 'wm3053', 400],
    [new RuntimeError('conflict', 'task t1 is not open', { target: 'task' }), 'wm3041', 409],
    [new RuntimeError('conflict', 'step has no action approve', { target: 'action' }), 'wm3110', 400],
    [new RuntimeError('notFound', 'no action approve', { target: 'action' }), 'wm3110', 400],
    [new RuntimeError('notFound', 'no task t9', { target: 'task' }), 'wm3005', 404],
    [new RuntimeError('notFound', 'no thread b', { target: 'thread' }), 'wm3080', 404],
    [new RuntimeError('notFound', 'no function f', { target: 'function' }), 'wm3050', 500],
    [new RuntimeError('technical', 'time limit of 10000 ms exceeded'), 'wm3050', 500],
    [new RuntimeError('validation', 'output.vat must be number', { path: '/vat' }), 'wm3050', 500],
  ]
  for (const [error, code, status] of cases) {
    t.match(
      runtimeFailure(fail, error, 'advance'),
      { code, statusCode: status, message: new RegExp(error.message) },
      `${error.kind}/${error.details.target ?? ''} → ${code}`,
    )
  }
  t.same(
    runtimeFailure(fail, new RuntimeError('business', 'no', { code: 'X' }), 'advance').parameters,
    { code: 'X' },
    "the fail node's code is kept",
  )
})

t.test('function actions: the documented 401 for a missing function action or any failure of it', async (t) => {
  t.match(runtimeFailure(fail, new RuntimeError('notFound', 'no function action', { target: 'action' }), 'actionFunction'), {
    code: 'wm3051',
    statusCode: 401,
  })
  t.match(runtimeFailure(fail, new RuntimeError('notFound', 'no function checkBalance', { target: 'function' }), 'actionFunction'), {
    code: 'wm3051',
    statusCode: 401,
  })
  t.match(runtimeFailure(fail, new RuntimeError('business', 'Not enough days'), 'actionFunction'), { code: 'wm3052', statusCode: 401 })
  t.match(runtimeFailure(fail, new RuntimeError('technical', 'step limit'), 'actionFunction'), { code: 'wm3052', statusCode: 401 })
  t.match(runtimeFailure(fail, new RuntimeError('conflict', 'not open', { target: 'task' }), 'actionFunction'), {
    code: 'wm3041',
    statusCode: 409,
  })
})

t.test('a defect in the runtime answers 500 without its text; a catalogue error passes unchanged', async (t) => {
  const defect = runtimeFailure(fail, new TypeError('Cannot read properties of undefined'), 'advance')
  t.match(defect, { code: 'wm3050', statusCode: 500 })
  t.notMatch(defect.message, /Cannot read/)
  const catalogued = fail('wm3042', { args: ['pi-1'] })
  t.equal(runtimeFailure(fail, catalogued, 'advance'), catalogued)
  await t.rejects(
    runtimeCall(fail, 'advance', async () => Promise.reject(new RuntimeError('business', 'no'))),
    { code: 'wm3053' },
  )
  t.equal(await runtimeCall(fail, 'advance', async () => 42), 42)
})

t.test("functions outside an action: a bad input is the caller's 400, a missing function 404, the rest their own codes", async (t) => {
  const cases: Array<[RuntimeError, string]> = [
    [new RuntimeError('business', 'Not enough days', { code: 'DAYS' }), 'wm3053'],
    [new RuntimeError('validation', 'the input of function f is invalid', { path: 'functions.f.input' }), 'wm3056'],
    [new RuntimeError('validation', 'the output of function f is invalid', { path: 'functions.f.output' }), 'wm3055'],
    [new RuntimeError('notFound', 'no task t9', { target: 'task' }), 'wm3005'],
    [new RuntimeError('notFound', 'function f not found', { target: 'function' }), 'wm3054'],
    [new RuntimeError('notFound', 'a call node names a missing function', { target: 'function', path: 'functions.f.steps[0]' }), 'wm3055'],
    [new RuntimeError('conflict', 'task t1 is not open', { target: 'task' }), 'wm3041'],
    [new RuntimeError('technical', 'the function ran longer than 10000 ms'), 'wm3055'],
  ]
  for (const [error, code] of cases)
    t.match(
      runtimeFailure(fail, error, 'function'),
      { code, message: new RegExp(error.message) },
      `${error.kind}/${error.details.path ?? ''} → ${code}`,
    )
  t.same(
    runtimeFailure(fail, new RuntimeError('notFound', 'no task', { target: 'task', path: 'x' }), 'function').parameters,
    { path: 'x' },
    'answered without target, as before',
  )
  t.match(runtimeFailure(fail, new TypeError('boom'), 'function'), { code: 'wm3055', statusCode: 500 })
})
