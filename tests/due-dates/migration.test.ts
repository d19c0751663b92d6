import type { EditableModelBody } from '../../services/testing/models.js'
import t from 'tap'
import type { MigrateResult, Session } from '../../openapi/generated/schemas.js'
import type { StoredUser } from '../../store/collections.js'
import type { Envelope } from '../../services/testing/gateway.js'
import { insertModelRequest } from '../../services/testing/models.js'
import { completeTask } from '../../services/testing/workflow.js'
import { completeLeaveTask, HR, startDueStack, type DueStack } from './support.js'

function migrate(stack: DueStack, user: StoredUser, body: Record<string, unknown>) {
  return stack.client.call<Envelope<MigrateResult>>('migrateProcessInstances', 'POST', '/external/process/migrate', {
    user: user.userId,
    body: { ...HR, processId: 'leave-request', ...body },
  })
}

async function act(
  stack: DueStack,
  user: StoredUser,
  session: Session,
  actionType: 'complete' | 'cancel',
  taskId = session.formContext.task!.taskId,
): Promise<Session> {
  const answer = await completeLeaveTask(stack, user, session, { actionType, taskId })
  if (answer.status !== 200) throw new Error(`${actionType} failed: ${JSON.stringify(answer.body)}`)
  return answer.body.data
}

/** Version 2: `request` renamed `submit`, the approval renamed. */
function renameRequest(body: EditableModelBody): void {
  body.steps.submit = body.steps.request
  delete body.steps.request
  body.start = 'submit'
  body.steps.approve.name = 'Approve leave (v2)'
  body.steps.approve.actions[1].next = 'submit'
}

/** Version 3: the approval is a function step. */
function automateApproval(body: EditableModelBody): void {
  body.steps.approve = { type: 'function', function: 'bookLeave', next: 'archive' }
  delete body.steps.book
  body.steps.route.default = 'archive'
  body.steps.hrReview.actions[0].next = 'archive'
}

t.test(
  'migration moves unended instances whose waiting steps exist with their type in the new version; the others are reported',
  async (t) => {
    const stack = await startDueStack(t)
    const { employee, admin, system } = stack.users
    const atRequest = await stack.startLeave(employee)
    const atApprove = await stack.startLeave(employee)
    await act(stack, employee, atApprove, 'complete')
    const cancelled = await stack.startLeave(employee)
    await act(stack, employee, cancelled, 'cancel')
    const id = (session: Session) => session.context.processInstance.processInstanceId
    t.equal((await stack.insertLeaveRequest(renameRequest)).status, 200)
    t.equal((await stack.insertLeaveRequest(automateApproval)).status, 200)
    const before = JSON.stringify(await Promise.all([atRequest, atApprove, cancelled].map((session) => stack.context(id(session)))))

    const dry = await migrate(stack, admin, { fromVersion: 1, toVersion: 3, dryRun: true })
    t.equal(dry.status, 200)
    t.same(
      dry.body.data,
      {
        migrated: 1,
        skipped: [{ processInstanceId: id(atApprove), reason: 'step "approve" is a userTask step, in version 3 a function step' }],
      },
      'a waiting step of another type in the new version keeps the instance where it is',
    )
    const dryWithoutMapping = await migrate(stack, admin, { fromVersion: 1, toVersion: 2, dryRun: true })
    t.same(
      dryWithoutMapping.body.data,
      {
        migrated: 1,
        skipped: [{ processInstanceId: id(atRequest), reason: 'step "request" does not exist in version 2' }],
      },
      'a waiting step the new version does not have keeps the instance where it is',
    )
    t.equal(
      JSON.stringify(await Promise.all([atRequest, atApprove, cancelled].map((session) => stack.context(id(session))))),
      before,
      'dry runs change nothing',
    )
    t.same(await stack.activities(id(atRequest), 'migrated'), [])

    const real = await migrate(stack, system, { fromVersion: 1, toVersion: 2, stepMapping: { request: 'submit' } })
    t.equal(real.status, 200)
    t.same(real.body.data, { migrated: 2, skipped: [] }, 'a system user migrates both unended instances; the cancelled one is not counted')
    const moved = await stack.context(id(atRequest))
    t.equal(moved.processInstance.modelVersion, 2)
    t.match(moved.processInstance.tasks, [{ stepId: 'submit', status: 'open' }], 'the open task is at the mapped step')
    t.match(moved.processInstance.threads, [{ stepId: 'submit', status: 'waiting' }])
    t.match(await stack.activities(id(atRequest), 'migrated'), [
      { userId: system.userId, details: { fromVersion: 1, toVersion: 2, stepMapping: { request: 'submit' } } },
    ])
    t.equal((await stack.notification(id(atRequest)))?.eventType, 'Migrated', 'a Migrated notification')
    t.equal((await stack.context(id(cancelled))).processInstance.modelVersion, 1, 'the ended instance stays on its version')

    await act(
      stack,
      employee,
      {
        ...atRequest,
        formContext: { ...atRequest.formContext, task: { ...atRequest.formContext.task!, taskId: moved.processInstance.tasks[0]!.taskId } },
      },
      'complete',
    )
    const approval = (await stack.context(id(atRequest))).processInstance.tasks.find((task) => task.status === 'open')
    t.match(approval, { stepId: 'approve', name: 'Approve leave (v2)' }, 'the migrated instance follows version 2')

    const again = await migrate(stack, admin, { fromVersion: 1, toVersion: 2 })
    t.same(again.body.data, { migrated: 0, skipped: [] }, 'nothing is left on version 1')
    t.same((await stack.activities(id(atApprove), 'migrated')).length, 1)
  },
)

t.test('migration is for admins and system users, between two existing different versions with a mapping of existing steps', async (t) => {
  const stack = await startDueStack(t)
  const { manager, admin, stranger } = stack.users
  const session = await stack.startLeave(stack.users.employee)
  t.equal((await stack.insertLeaveRequest(renameRequest)).status, 200)
  const before = JSON.stringify(await stack.context(session.context.processInstance.processInstanceId))
  const cases: Array<[user: StoredUser, body: Record<string, unknown>, status: number, code: string]> = [
    [manager, { fromVersion: 1, toVersion: 2, stepMapping: { request: 'submit' } }, 403, 'wm4031'],
    [admin, { fromVersion: 2, toVersion: 2 }, 400, 'wm3132'],
    [admin, { fromVersion: 1, toVersion: 9 }, 404, 'wm3002'],
    [admin, { fromVersion: 1, toVersion: 2, stepMapping: { nowhere: 'submit' } }, 400, 'wm3132'],
    [admin, { fromVersion: 1, toVersion: 2, stepMapping: { request: 'nowhere' } }, 400, 'wm3132'],
    [admin, { fromVersion: 1, toVersion: 2, appId: 'sales' }, 404, 'wm3002'],
    [admin, { fromVersion: 0, toVersion: 2 }, 400, 'wm4000'],
    [stranger, { fromVersion: 1, toVersion: 2, stepMapping: { request: 'submit' } }, 403, 'wm4031'],
  ]
  for (const [user, body, status, code] of cases) {
    const answer = await migrate(stack, user, body)
    t.equal(answer.status, status, `${user.fullName} ${JSON.stringify(body)}`)
    t.equal(answer.body.error?.code, code)
  }
  t.equal(
    JSON.stringify(await stack.context(session.context.processInstance.processInstanceId)),
    before,
    'no refused request changed anything',
  )
})

t.test(
  'an instance waiting in a parallel section migrates with its join renamed, and its branches then join on the new version',
  async (t) => {
    const stack = await startDueStack(t)
    const { employee, finance, legal, admin } = stack.users
    const started = await stack.client.call<Envelope<Session>>('openContext', 'POST', '/context', {
      user: employee.userId,
      body: { ...HR, processId: 'purchase', input: { item: 'Desk', amount: 300 } },
    })
    t.equal(started.status, 200)
    const session = started.body.data
    const purchaseId = session.context.processInstance.processInstanceId
    const submitted = await completeTask<Envelope<Session>>(stack.client, employee, session)
    t.equal(submitted.status, 200)
    const inserted = await stack.client.call<Envelope<string>>('insertModel', 'POST', '/model/insertModel', {
      body: insertModelRequest('purchase', {
        ...HR,
        edit: (body: EditableModelBody) => {
          body.steps.merged = body.steps.joined
          delete body.steps.joined
          body.steps.approvals.join = 'merged'
          body.steps.finance.actions[0].next = 'merged'
          body.steps.legal.actions[0].next = 'merged'
        },
      }),
    })
    t.equal(inserted.status, 200)
    const migrateAs = (body: Record<string, unknown>) =>
      stack.client.call<Envelope<MigrateResult>>('migrateProcessInstances', 'POST', '/external/process/migrate', {
        user: admin.userId,
        body: { ...HR, processId: 'purchase', fromVersion: 1, toVersion: 2, ...body },
      })
    t.same((await migrateAs({})).body.data, {
      migrated: 0,
      skipped: [{ processInstanceId: purchaseId, reason: 'step "joined" does not exist in version 2' }],
    })
    t.same((await migrateAs({ stepMapping: { joined: 'merged' } })).body.data, { migrated: 1, skipped: [] })
    const moved = await stack.context(purchaseId)
    t.same(moved.processInstance.threads.map((thread) => [thread.stepId, thread.join ?? null]).sort(), [
      ['finance', 'merged'],
      ['legal', 'merged'],
      ['merged', null],
    ])
    for (const [user, stepId] of [
      [finance, 'finance'],
      [legal, 'legal'],
    ] as const) {
      const task = (await stack.context(purchaseId)).processInstance.tasks.find(
        (candidate) => candidate.stepId === stepId && candidate.status === 'open',
      )!
      const answer = await stack.client.call('runExternalTaskAction', 'POST', `/external/task/${task.taskId}/action/complete`, {
        user: user.userId,
        body: { ...HR, processInstanceId: purchaseId },
      })
      t.equal(answer.status, 200, `${stepId} approved`)
    }
    const done = await stack.context(purchaseId)
    t.equal(done.processStatus, 'completed', 'both branches joined at the renamed join and the process ran to its end on version 2')
    t.equal(done.processInstance.modelVersion, 2)
  },
)
