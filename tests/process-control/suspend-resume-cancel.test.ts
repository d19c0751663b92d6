/**
 * Suspend, resume and cancel through the gateway (docs/reference/lifecycle.md#suspending-resuming-cancelling):
 * who may, what each does to the instance, its activity and its notification, and that a suspended instance refuses every change
 * (409 wm3140, nothing stored) while reading, display and notes still work.
 */
import t from 'tap'
import type { Session } from '../../openapi/generated/schemas.js'
import {
  lockHolder,
  storedActivities,
  storedActivityTypes,
  storedInstance,
  notificationRecordOf,
} from '../../services/testing/instance-store.js'
import { HR } from '../../services/testing/workflow.js'
import type { ActivityRecord } from '../../store/activity-log.js'
import { type ControlStack, startControlStack } from './stack.js'

function idOf(session: Session): string {
  return session.context.processInstance.processInstanceId
}

function taskIdOf(session: Session): string {
  const task = session.formContext.task
  if (!task) throw new Error('the session has no task')
  return task.taskId
}

async function control(
  stack: ControlStack,
  operation: 'suspend' | 'resume' | 'cancel',
  id: string,
  as = stack.users.admin,
  body: Record<string, unknown> = {},
) {
  const operationId = { suspend: 'suspendProcess', resume: 'resumeProcess', cancel: 'cancelProcess' }[operation]
  return stack.send(operationId, 'POST', `/process/${encodeURIComponent(id)}/${operation}`, { as, body: { ...HR, ...body } })
}

async function lastActivity(stack: ControlStack, id: string): Promise<ActivityRecord | undefined> {
  return (await storedActivities(stack.store, id)).at(-1)
}

t.test(
  'suspend shows `suspended` on GET /process/:id and in every context; resume gives back the status it had; both logged and notified',
  async (t) => {
    const stack = await startControlStack(t)
    const { users } = stack
    const session = await stack.startLeave()
    const id = idOf(session)

    t.match(await control(stack, 'suspend', id, users.admin, { reason: 'Audit of leave requests' }), {
      status: 200,
      body: { status: 'success', data: { isSuccess: true } },
    })
    t.match(await stack.send('getProcessStatus', 'GET', `/process/${id}?appId=hr`, { as: users.employee }), {
      status: 200,
      body: { data: { processStatus: 'suspended' } },
    })
    const opened = await stack.send<Session>('openContext', 'POST', '/context', {
      as: users.employee,
      body: { ...HR, processId: 'leave-request', processInstanceId: id },
    })
    t.equal(opened.status, 200, 'displaying a suspended instance works')
    t.equal(opened.body.data.context.processInstance.processStatus, 'suspended', 'the context shows it')
    t.match(await lastActivity(stack, id), { type: 'display' })
    const activities = await stack.send<Array<{ type: string; userId: string; details?: Record<string, unknown> }>>(
      'listContextActivity',
      'POST',
      '/context/activity',
      { as: users.employee, body: { ...HR, processInstanceId: id } },
    )
    t.match(
      activities.body.data.find((entry) => entry.type === 'suspended'),
      { userId: users.admin.userId, userName: users.admin.fullName, details: { reason: 'Audit of leave requests' } },
      'the activity names the user and the reason',
    )
    t.equal((await notificationRecordOf(stack.store, id))?.eventType, 'Suspended')

    t.match(await control(stack, 'resume', id), { status: 200, body: { data: { isSuccess: true } } })
    const resumed = await storedInstance(stack.store, id)
    t.equal(resumed.processStatus, 'running', 'back to the status it had')
    t.equal(resumed.processInstance.suspendedFrom, undefined)
    t.match(await lastActivity(stack, id), { type: 'resumed', userId: users.admin.userId })
    t.equal((await notificationRecordOf(stack.store, id))?.eventType, 'Resumed')

    // A failed instance goes back to failed, by a system user this time.
    const failed = idOf(await stack.startFailedLeave())
    t.equal((await control(stack, 'suspend', failed, users.system)).status, 200)
    t.equal((await storedInstance(stack.store, failed)).processStatus, 'suspended')
    t.equal((await control(stack, 'resume', failed, users.system)).status, 200)
    t.equal((await storedInstance(stack.store, failed)).processStatus, 'failed')
  },
)

t.test('suspend and resume are for admins and system users of the tenant; wrong states are 409 wm3141', async (t) => {
  const stack = await startControlStack(t)
  const { users } = stack
  const id = idOf(await stack.startLeave())
  const version = (await storedInstance(stack.store, id)).version
  t.match(
    await control(stack, 'suspend', id, users.employee),
    { status: 403, body: { status: 'permissionError', error: { code: 'wm4031' } } },
    'not the initiator',
  )
  t.match(await control(stack, 'suspend', id, users.manager), { status: 403, body: { error: { code: 'wm4031' } } })
  t.match(await control(stack, 'suspend', id, users.stranger), { status: 403 }, 'a user of another tenant may not either')
  t.match(await control(stack, 'resume', id, users.employee), { status: 403, body: { error: { code: 'wm4031' } } })
  t.equal((await storedInstance(stack.store, id)).version, version, 'nothing changed')
  t.match(
    await control(stack, 'resume', id),
    { status: 409, body: { status: 'customerror', error: { code: 'wm3141' } } },
    'resuming a running instance',
  )
  t.equal((await control(stack, 'suspend', id)).status, 200)
  t.match(await control(stack, 'suspend', id), { status: 409, body: { error: { code: 'wm3141' } } }, 'suspending twice')
  t.match(await control(stack, 'suspend', 'no-such-instance'), { status: 404, body: { error: { code: 'wm3001' } } })
})

t.test("another tenant's admin does not find the instance", async (t) => {
  const stack = await startControlStack(t)
  const id = idOf(await stack.startLeave())
  const { createTestUser } = await import('../../services/testing/users.js')
  const foreignAdmin = await createTestUser(stack.store, {
    appId: 'sales',
    organizationId: 'acme',
    fullName: 'Sue Sales-Admin',
    roles: ['admin'],
  })
  for (const operation of ['suspend', 'resume', 'cancel'] as const) {
    t.match(
      await control(stack, operation, id, foreignAdmin, { appId: 'sales' }),
      { status: 404, body: { error: { code: 'wm3001' } } },
      operation,
    )
  }
  t.equal((await storedInstance(stack.store, id)).processStatus, 'running')
})

t.test('every change of a suspended instance is 409 wm3140 and stores nothing; reading, display and notes still work', async (t) => {
  const stack = await startControlStack(t)
  const { users, store } = stack
  const session = await stack.startLeave()
  const id = idOf(session)
  const taskId = taskIdOf(session)
  const instance = session.context.processInstance
  const ids = { ...HR, processId: instance.processId, processInstanceId: id, businessKey: instance.businessKey }

  const uploadForm = () => {
    const form = new FormData()
    form.append('fields', JSON.stringify({ ...ids, taskDefinitionKey: 'request', taskId, label: 'Note', fileName: 'note.pdf' }))
    form.append('fileBody', new Blob([Buffer.from('%PDF-1.4 note')], { type: 'application/pdf' }), 'note.pdf')
    return form
  }
  const uploaded = await stack.send<{ storageHandle: string }>('uploadFile', 'POST', '/file/upload', {
    as: users.employee,
    body: uploadForm(),
  })
  t.equal(uploaded.status, 200, 'a file uploaded before the suspension')
  t.equal((await control(stack, 'suspend', id)).status, 200)

  const before = await storedInstance(store, id)
  const activitiesBefore = (await storedActivityTypes(store, id)).length
  const changes: Array<[string, string, string, { as: typeof users.admin; body: unknown }]> = [
    [
      'completeAction',
      'POST',
      '/action/complete',
      { as: users.employee, body: { ...ids, taskId, actionType: 'complete', dataInstance: { days: 3 } } },
    ],
    ['saveAction', 'POST', '/action/save', { as: users.employee, body: { ...ids, taskId, dataInstance: { days: 4 } } }],
    [
      'runActionFunction',
      'POST',
      '/action/function',
      { as: users.employee, body: { ...ids, taskId, customType: 'checkBalance', dataInstance: { days: 3 } } },
    ],
    [
      'runTaskFunction',
      'POST',
      `/task/${taskId}/run/suggestDates`,
      { as: users.employee, body: { ...ids, inputParams: { from: 'Monday' } } },
    ],
    ['commitTask', 'POST', `/task/${taskId}/commit`, { as: users.employee, body: { ...ids, dataInstance: { days: 5 } } }],
    ['uploadFile', 'POST', '/file/upload', { as: users.employee, body: uploadForm() }],
    [
      'deleteFile',
      'POST',
      '/file/delete',
      { as: users.employee, body: { ...ids, taskDefinitionKey: 'request', taskId, storageHandle: uploaded.body.data.storageHandle } },
    ],
    [
      'runExternalTaskAction',
      'POST',
      `/external/task/${taskId}/action/complete`,
      { as: users.admin, body: { ...HR, processInstanceId: id } },
    ],
    [
      'assignTaskToUser',
      'POST',
      `/external/task/${taskId}/assignToUser`,
      { as: users.admin, body: { ...HR, processInstance: id, targetUserId: users.colleague.userId } },
    ],
    [
      'assignTaskToSwimlane',
      'POST',
      `/external/task/${taskId}/assignToSwimlane`,
      { as: users.admin, body: { ...HR, processInstance: id, swimlane: 'employee' } },
    ],
    [
      'changeProcessStep',
      'POST',
      '/external/process/changeStep',
      { as: users.admin, body: { ...HR, processInstanceId: id, stepId: 'approve' } },
    ],
    [
      'executeExternalFunction',
      'POST',
      '/external/function/suggestDates/execute',
      { as: users.employee, body: { ...ids, taskId, inputParams: { from: 'Monday' } } },
    ],
  ]
  for (const [operationId, method, path, options] of changes) {
    const answer = await stack.send(operationId, method, path, options)
    t.match(answer, { status: 409, body: { status: 'customerror', error: { code: 'wm3140' } } }, `${operationId} is refused`)
    const after = await storedInstance(store, id)
    t.equal(after.version, before.version, `${operationId} stored nothing`)
  }
  t.same((await storedInstance(store, id)).processInstance, before.processInstance, 'the instance is exactly as it was')
  t.equal((await storedActivityTypes(store, id)).length, activitiesBefore, 'no activity was logged')
  t.equal((await storedInstance(store, id)).processInstance.files.length, 1, 'the file is still there, no second one')

  t.equal((await stack.send('getProcessStatus', 'GET', `/process/${id}?appId=hr`, { as: users.employee })).status, 200, 'reading works')
  t.equal(
    (await stack.send('listContextActivity', 'POST', '/context/activity', { as: users.employee, body: { ...HR, processInstanceId: id } }))
      .status,
    200,
  )
  t.equal(
    (await stack.send('openContext', 'POST', '/context', { as: users.employee, body: { ...ids, skipToForm: true } })).status,
    200,
    'display works',
  )
  const noted = await stack.send<Session>('addNote', 'POST', '/note/add', {
    as: users.employee,
    body: { ...ids, taskId, note: 'Waiting for the audit' },
  })
  t.equal(noted.status, 200, 'notes still work')
  t.equal(noted.body.data.context.processInstance.processStatus, 'suspended')
  t.equal((await storedInstance(store, id)).processInstance.notes[0]?.note, 'Waiting for the audit')

  // After the resume the same change goes through.
  t.equal((await control(stack, 'resume', id)).status, 200)
  t.equal(
    (await stack.send('saveAction', 'POST', '/action/save', { as: users.employee, body: { ...ids, taskId, dataInstance: { days: 4 } } }))
      .status,
    200,
  )
})

t.test('retrying a failed thread of a suspended instance is 409 wm3140', async (t) => {
  const stack = await startControlStack(t)
  const id = idOf(await stack.startFailedLeave())
  const failedThread = (await storedInstance(stack.store, id)).processInstance.threads.find((thread) => thread.status === 'failed')
  t.ok(failedThread)
  await stack.payrollOnline(true)
  t.equal((await control(stack, 'suspend', id)).status, 200)
  const version = (await storedInstance(stack.store, id)).version
  const retried = await stack.send('retryAction', 'POST', '/action/retry', {
    as: stack.users.admin,
    body: { ...HR, processInstanceId: id, threadId: failedThread?.threadId },
  })
  t.match(retried, { status: 409, body: { error: { code: 'wm3140' } } })
  t.equal((await storedInstance(stack.store, id)).version, version)
  t.equal((await control(stack, 'resume', id)).status, 200)
  t.equal(
    (
      await stack.send('retryAction', 'POST', '/action/retry', {
        as: stack.users.admin,
        body: { ...HR, processInstanceId: id, threadId: failedThread?.threadId },
      })
    ).status,
    200,
  )
  t.equal((await storedInstance(stack.store, id)).processStatus, 'completed')
})

t.test(
  'cancel: open tasks cancelled and unlocked, processStatus cancelled, logged and notified; by admins and the initiator only',
  async (t) => {
    const stack = await startControlStack(t)
    const { users, store } = stack
    const session = await stack.startLeave()
    const id = idOf(session)
    const taskId = taskIdOf(session)
    t.equal(await lockHolder(store, taskId), users.employee.userId, 'the first task is locked for the initiator')

    t.match(
      await control(stack, 'cancel', id, users.colleague),
      { status: 403, body: { error: { code: 'wm4031' } } },
      'another user of the tenant may not',
    )
    t.match(await control(stack, 'cancel', id, users.manager), { status: 403 })
    t.equal((await storedInstance(store, id)).processStatus, 'running')

    t.match(
      await control(stack, 'cancel', id, users.employee, { reason: 'No longer needed' }),
      { status: 200, body: { data: { isSuccess: true } } },
      'the initiator may',
    )
    const cancelled = await storedInstance(store, id)
    t.equal(cancelled.processStatus, 'cancelled')
    t.same(
      cancelled.processInstance.tasks.map((task) => task.status),
      ['cancelled'],
    )
    t.ok(cancelled.processInstance.threads.every((thread) => thread.status === 'done'))
    t.equal(await lockHolder(store, taskId), null, 'its lock is released')
    t.match(await lastActivity(stack, id), { type: 'cancelled', userId: users.employee.userId, details: { reason: 'No longer needed' } })
    t.equal((await notificationRecordOf(store, id))?.eventType, 'Cancelled')
    t.match(await control(stack, 'cancel', id), { status: 409, body: { error: { code: 'wm3141' } } }, 'cancelling an ended instance')
    t.match(await stack.send('getProcessStatus', 'GET', `/process/${id}?appId=hr`, { as: users.employee }), {
      body: { data: { processStatus: 'cancelled', tasks: [] } },
    })

    // An admin cancels a suspended instance; a completed one cannot be cancelled.
    const suspended = idOf(await stack.startLeave())
    t.equal((await control(stack, 'suspend', suspended)).status, 200)
    t.equal((await control(stack, 'cancel', suspended, users.system)).status, 200)
    t.equal((await storedInstance(store, suspended)).processStatus, 'cancelled')
    const failed = idOf(await stack.startFailedLeave())
    await stack.payrollOnline(true)
    const thread = (await storedInstance(store, failed)).processInstance.threads.find((candidate) => candidate.status === 'failed')
    t.equal(
      (
        await stack.send('retryAction', 'POST', '/action/retry', {
          as: users.admin,
          body: { ...HR, processInstanceId: failed, threadId: thread?.threadId },
        })
      ).status,
      200,
    )
    t.equal((await storedInstance(store, failed)).processStatus, 'completed')
    t.match(await control(stack, 'cancel', failed), { status: 409, body: { error: { code: 'wm3141' } } }, 'a completed instance')
  },
)
