/**
 * The `externalTask` step with plain objects (docs/reference/external-tasks.md): the thread waits
 * for an external task, a worker's output moves it on, a final failure fails it until `retry`.
 */
import t from 'tap'
import { compileProcess } from './compile.js'
import { fakeEnvironment, fakeHost, refusal, user } from './test-support.js'
import type { ExternalTaskCreated, ProcessModelBody, ProcessState, RuntimeEffect, StepDefinition, WorkflowModel } from './types.js'

const clerk = user('cleo', ['user'], 'Cleo Clerk')

function exportModel(exportStep: Partial<StepDefinition> = {}): WorkflowModel<ProcessModelBody> {
  return {
    modelID: 'payroll',
    type: 'process',
    appId: 'hr',
    organizationId: 'acme',
    version: 1,
    updateDate: '2026-01-01T00:00:00.000Z',
    modelBody: {
      start: 'export',
      steps: {
        export: { type: 'externalTask', topic: 'payroll', next: 'done', ...exportStep } as StepDefinition,
        done: { type: 'end' },
      },
    },
  }
}

function created(effects: readonly RuntimeEffect[]): ExternalTaskCreated[] {
  return effects.flatMap((effect) => (effect.kind === 'externalTaskCreated' ? [effect.externalTask] : []))
}

async function started(exportStep: Partial<StepDefinition> = {}, input: Record<string, unknown> = { days: 3, employee: 'cleo' }) {
  const process = compileProcess(exportModel(exportStep))
  const env = fakeEnvironment(clerk, fakeHost())
  const transition = await process.start({ input, processInstanceId: 'pi-1', appId: 'hr', organizationId: 'acme', initiator: clerk }, env)
  return { process, env, transition }
}

t.test('reaching the step creates an external task with the evaluated input; the thread waits for it', async (t) => {
  const { transition } = await started({ input: "{ 'days': data.days, 'who': process.initiator }", retries: 5 })
  const [task] = created(transition.effects)
  t.ok(task, 'one external task')
  t.match(task, { topic: 'payroll', stepId: 'export', input: { days: 3, who: 'cleo' }, retries: 5 })
  const thread = transition.state.processInstance.threads[0]
  t.match(thread, { status: 'waiting', stepId: 'export', externalTaskId: task?.externalTaskId })
  t.equal(transition.state.processInstance.processStatus, 'running')
})

t.test('without an input expression the task gets a copy of the dataInstance and 3 retries', async (t) => {
  const { transition } = await started()
  t.same(created(transition.effects)[0]?.input, { days: 3, employee: 'cleo' })
  t.equal(created(transition.effects)[0]?.retries, 3)
})

t.test('an input expression is bounded like every expression of the model', async (t) => {
  const process = compileProcess(exportModel({ input: '[1..100000].($ * 2)' }))
  const env = fakeEnvironment(clerk, fakeHost(), { expressionNodes: 50 })
  const error = await refusal(
    process.start({ input: {}, processInstanceId: 'pi-1', appId: 'hr', organizationId: 'acme', initiator: clerk }, env),
  )
  t.equal(error.kind, 'technical')
})

t.test('completing writes the output at `as` and moves the thread on to the end', async (t) => {
  const { process, env, transition } = await started({ as: 'data.payroll.result' })
  const id = created(transition.effects)[0]!.externalTaskId
  const done = await process.completeExternalTask(transition.state, id, { reference: 'PR-7' }, env)
  t.same(done.state.dataInstance, { days: 3, employee: 'cleo', payroll: { result: { reference: 'PR-7' } } })
  t.equal(done.state.processInstance.processStatus, 'completed')
  t.notOk(done.state.processInstance.threads[0]?.externalTaskId, 'the thread no longer waits for it')
})

t.test('without `as` an object output is merged into the data; anything else is refused', async (t) => {
  const { process, env, transition } = await started()
  const id = created(transition.effects)[0]!.externalTaskId
  const done = await process.completeExternalTask(transition.state, id, { exported: true, days: 4 }, env)
  t.same(done.state.dataInstance, { days: 4, employee: 'cleo', exported: true })
  const refused = await refusal(process.completeExternalTask(transition.state, id, [1, 2], env))
  t.equal(refused.kind, 'validation')
  const dangerous = await process.completeExternalTask(transition.state, id, JSON.parse('{"__proto__": {"polluted": true}}'), env)
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'a __proto__ key stays an own key of the data')
  t.ok(Object.hasOwn(dangerous.state.dataInstance, '__proto__'))
})

t.test('a task no thread waits for is not found; the state given is never changed', async (t) => {
  const { process, env, transition } = await started()
  const before: ProcessState = JSON.parse(JSON.stringify(transition.state)) as ProcessState
  const error = await refusal(process.completeExternalTask(transition.state, 'no-such-task', {}, env))
  t.match(error, { kind: 'notFound', details: { target: 'externalTask' } })
  t.same(transition.state, before)
})

t.test('a final failure fails the thread with the message; retry creates a new external task', async (t) => {
  const { process, env, transition } = await started()
  const id = created(transition.effects)[0]!.externalTaskId
  const failed = await process.failExternalTask(transition.state, id, 'payroll system down', env)
  const thread = failed.state.processInstance.threads[0]!
  t.match(thread, { status: 'failed', error: { message: 'payroll system down', code: 'EXTERNAL_TASK_FAILED' } })
  t.notOk(thread.externalTaskId)
  t.equal(failed.state.processInstance.processStatus, 'failed')
  t.ok(failed.effects.some((effect) => effect.kind === 'threadFailed'))
  const retried = await process.retry(failed.state, thread.threadId, env)
  const again = created(retried.effects)[0]
  t.ok(again, 'a new external task')
  t.not(again?.externalTaskId, id)
  t.equal(retried.state.processInstance.processStatus, 'running')
})
