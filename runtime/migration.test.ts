import t from 'tap'
import { compileProcess } from './compile.js'
import { planMigration, stepsWaitedAt } from './migration.js'
import { exampleModel, fakeEnvironment, fakeHost, user } from './test-support.js'
import type { ProcessInstance, ProcessModelBody, StepDefinition } from './types.js'

const buyer = user('bea', ['buyer'], 'Bea Buyer')
const purchase = exampleModel('purchase')
const steps = purchase.modelBody.steps

/** A purchase whose submit task is done: the parent thread waits at the join, the branches at finance and legal. */
async function inApprovals(): Promise<ProcessInstance> {
  const compiled = compileProcess(purchase)
  const host = fakeHost({ users: [buyer] })
  const started = await compiled.start(
    { input: { item: 'Desk', amount: 300 }, processInstanceId: 'pi-1', appId: 'hr', organizationId: 'acme', initiator: buyer },
    fakeEnvironment(buyer, host),
  )
  const submit = started.state.processInstance.tasks[0]!
  const submitted = await compiled.act(
    started.state,
    { taskId: submit.taskId, actionType: 'complete' },
    fakeEnvironment(buyer, host, {}, { next: 50 }),
  )
  return submitted.state.processInstance
}

function variant(edit: (steps: Record<string, StepDefinition>) => void): Record<string, StepDefinition> {
  const copy = structuredClone(steps) as ProcessModelBody['steps']
  edit(copy)
  return copy
}

t.test("an instance in a parallel section waits at its branches' user tasks and at the join", async (t) => {
  t.same(stepsWaitedAt(await inApprovals()).sort(), ['finance', 'joined', 'legal'])
})

t.test('a migration renames the steps of open tasks, unfinished threads and the join their branches run to', async (t) => {
  const instance = await inApprovals()
  const target = variant((next) => {
    next.merged = next.joined!
    delete next.joined
    ;(next.approvals as { join: string }).join = 'merged'
    for (const id of ['finance', 'legal']) (next[id] as { actions: Array<{ next: string }> }).actions[0]!.next = 'merged'
  })
  t.match(planMigration(instance, steps, target, 2, {}), { reason: 'step "joined" does not exist in version 2' })
  const plan = planMigration(instance, steps, target, 2, { joined: 'merged' })
  if (!('instance' in plan)) throw new Error(plan.reason)
  t.equal(plan.instance.modelVersion, 2)
  t.same(plan.instance.threads.map((thread) => [thread.stepId, thread.status, thread.join]).sort(), [
    ['finance', 'waiting', 'merged'],
    ['legal', 'waiting', 'merged'],
    ['merged', 'waiting', undefined],
  ])
  t.same(
    plan.instance.tasks
      .filter((task) => task.status === 'open')
      .map((task) => task.stepId)
      .sort(),
    ['finance', 'legal'],
  )
  t.equal(plan.instance.tasks.find((task) => task.status === 'completed')?.stepId, 'submit', 'ended tasks keep their step')
  t.equal(instance.modelVersion, 1, 'the instance given is not changed')
})

t.test('a migration is refused when a waited-at step changes type, and says which', async (t) => {
  const instance = await inApprovals()
  const target = variant((next) => {
    next.legal = { type: 'function', function: 'vatOf', next: 'joined' }
  })
  t.same(planMigration(instance, steps, target, 3, {}), { reason: 'step "legal" is a userTask step, in version 3 a function step' })
  t.same(planMigration(instance, steps, steps, 3, { legal: 'order' }), {
    reason: 'step "legal" (mapped to "order") is a userTask step, in version 3 a function step',
  })
})
