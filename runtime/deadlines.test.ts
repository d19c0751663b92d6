import t from 'tap'
import { compileProcess } from './compile.js'
import { exampleModel, fakeEnvironment, fakeHost, user } from './test-support.js'
import { RuntimeError, type ProcessModelBody } from './types.js'

const employee = user('emma', ['employee'], 'Emma Employee')
const manager = user('max', ['manager'], 'Max Manager')

function leaveWith(edit: (steps: ProcessModelBody['steps']) => void) {
  const model = exampleModel('leave-request')
  edit(model.modelBody.steps)
  return compileProcess(model)
}

function start(process: ReturnType<typeof compileProcess>, days = 2) {
  return process.start(
    { input: { days }, processInstanceId: 'pi-1', appId: 'hr', organizationId: 'acme', initiator: employee },
    fakeEnvironment(employee, fakeHost({ users: [employee, manager] })),
  )
}

t.test(
  'a dueDate expression may give epoch milliseconds, nothing (no due date), or fails the start when it gives no date-time',
  async (t) => {
    const millis = await start(leaveWith((steps) => Object.assign(steps.request!, { dueDate: '1772409600000 + data.days * 86400000' })))
    t.equal(millis.state.processInstance.tasks[0]?.dueDate, '2026-03-04T00:00:00.000Z')
    const none = await start(leaveWith((steps) => Object.assign(steps.request!, { dueDate: 'data.deadline' })))
    t.notOk('dueDate' in none.state.processInstance.tasks[0]!, 'an expression giving nothing sets no due date')
    try {
      await start(leaveWith((steps) => Object.assign(steps.request!, { dueDate: "'next week'" })))
      t.fail('the start should fail')
    } catch (error) {
      t.ok(error instanceof RuntimeError)
      t.match((error as Error).message, /steps\.request\.dueDate must give a date-time, not "next week"/)
    }
  },
)

t.test('escalate refuses an action escalation and an assignee expression that gives no user', async (t) => {
  const process = leaveWith((steps) =>
    Object.assign(steps.request!, {
      escalations: [
        { after: 'P1D', do: 'action' },
        { after: 'P2D', do: 'assignToUser', userId: 'data.nobody' },
      ],
    }),
  )
  const started = await start(process)
  const taskId = started.state.processInstance.tasks[0]!.taskId
  const env = fakeEnvironment(employee, fakeHost({ users: [employee, manager] }))
  await t.rejects(process.escalate(started.state, taskId, 0, env), /escalations\[0\] is not an escalation that keeps the task open/)
  await t.rejects(process.escalate(started.state, taskId, 1, env), /steps\.request\.escalations\[1\]\.userId must give a userId, not null/)
  t.same(started.state.processInstance.tasks[0]?.escalated, undefined, 'the state given is not changed')
})
