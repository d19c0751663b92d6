/**
 * Findings 1, 2 and 9 of the security issue, replayed through the gateway in header mode: each
 * request succeeded on the code before this change.
 */
import t from 'tap'
import type { StoredContext } from '../../store/collections.js'
import { Collections } from '../../store/collections.js'
import { snapshotTenantA, startSecureStack, TENANT_A, TENANT_B } from './authz-stack.js'

const ADMIN_TOKEN = 'admin-token-for-the-authz-tests'

t.test('finding 1: anonymous headless calls are refused with 401 permissionError and change nothing, ADMIN_TOKEN set or not', async (t) => {
  for (const adminToken of [undefined, ADMIN_TOKEN]) {
    const stack = await startSecureStack(t, adminToken ? { config: { adminToken } } : {})
    const { processInstanceId, businessKey, taskId } = stack.resources
    const ids = { ...TENANT_A, processInstanceId, processId: 'leave-request', businessKey }
    const anonymous: Array<[string, string, string, unknown?]> = [
      ['changeProcessStep', 'POST', '/external/process/changeStep', { ...ids, stepId: 'cancelled', dataInstance: { days: 99 } }],
      [
        'assignTaskToUser',
        'POST',
        `/external/task/${taskId}/assignToUser`,
        { ...TENANT_A, processInstance: processInstanceId, targetUserId: stack.a.outsider.userId },
      ],
      [
        'assignTaskToSwimlane',
        'POST',
        `/external/task/${taskId}/assignToSwimlane`,
        { ...TENANT_A, processInstance: processInstanceId, swimlane: 'hr' },
      ],
      ['runExternalTaskAction', 'POST', `/external/task/${taskId}/action/cancel`, { ...TENANT_A, processInstanceId }],
      [
        'startExternalProcess',
        'POST',
        '/external/process/start',
        { ...TENANT_A, processId: 'leave-request', input: { days: 1 }, initiatorUserId: stack.a.manager.userId },
      ],
      ['startProcess', 'POST', '/process/start', { ...TENANT_A, processId: 'leave-request', input: { days: 1 } }],
      ['releaseUserLocks', 'DELETE', `/external/locks/${stack.a.employee.userId}?appId=hr&organizationId=acme`],
      ['sendNotification', 'POST', '/notify/send', { ...ids, eventType: 'Finished' }],
      ['getConstantValue', 'POST', '/getConstantValue', { ...TENANT_A, processInstanceId, constantId: 'hr:vatRate' }],
      ['searchDataCollection', 'POST', '/external/data/search/Leave%20bookings', { ...TENANT_A }],
      ['executeExternalFunction', 'POST', '/external/function/vatOf/execute', { ...TENANT_A, inputParams: { amount: 100 } }],
      ['getProcessStatus', 'GET', `/process/${processInstanceId}?appId=hr`],
      ['closeApp', 'POST', '/appclose', { ...TENANT_A, taskId, userId: stack.a.employee.userId }],
      ['retryFailedBatchJobs', 'POST', '/external/batchjob/retry', { ...TENANT_A }],
    ]
    const before = await snapshotTenantA(stack.store)
    for (const [operationId, method, path, body] of anonymous) {
      const headers: Record<string, string> = adminToken ? { authorization: `Bearer ${adminToken}` } : {}
      const answer = await stack.send(method, path, { body, headers, operationId })
      t.equal(answer.status, 401, `${operationId} without a user (ADMIN_TOKEN ${adminToken ? 'presented' : 'unset'})`)
      t.match(answer.body, { status: 'permissionError', error: { code: 'wm4010' } }, operationId)
      t.notMatch(answer.text, /0\.2|"vat"|LR-/, `${operationId} reveals nothing`)
    }
    t.equal(await snapshotTenantA(stack.store), before, "tenant A's instance, tasks, locks, notifications and jobs are unchanged")
    t.equal(await stack.store.collection(Collections.contexts).countDocuments({}), 1, 'no process was started')
  }
})

t.test('finding 2: a same-tenant user who may not work on the instance cannot take it over', async (t) => {
  const stack = await startSecureStack(t)
  const { processInstanceId, businessKey, taskId } = stack.resources
  const { outsider, colleague } = stack.a
  const before = await snapshotTenantA(stack.store)
  const assign = await stack.send('POST', `/external/task/${taskId}/assignToUser`, {
    as: outsider,
    operationId: 'assignTaskToUser',
    body: { ...TENANT_A, processInstance: processInstanceId, targetUserId: outsider.userId },
  })
  t.match(assign, { status: 403, body: { status: 'permissionError', error: { code: 'wm4031' } } }, 'assignToUser to oneself')
  const toPool = await stack.send('POST', `/external/task/${taskId}/assignToSwimlane`, {
    as: colleague,
    operationId: 'assignTaskToSwimlane',
    body: { ...TENANT_A, processInstance: processInstanceId, swimlane: 'employee' },
  })
  t.match(toPool, { status: 403, body: { status: 'permissionError', error: { code: 'wm4031' } } }, 'assignToSwimlane')
  for (const user of [outsider, colleague]) {
    const cancel = await stack.send('POST', `/external/task/${taskId}/action/cancel`, {
      as: user,
      operationId: 'runExternalTaskAction',
      body: { ...TENANT_A, processInstanceId },
    })
    t.match(
      cancel,
      { status: 403, body: { status: 'permissionError', error: { code: 'wm4030' } } },
      `${user.fullName} cannot cancel through an external action`,
    )
  }
  const toEnd = await stack.send('POST', '/external/process/changeStep', {
    as: outsider,
    operationId: 'changeProcessStep',
    body: { ...TENANT_A, processInstanceId, stepId: 'done', status: 'completed' },
  })
  t.match(toEnd, { status: 403, body: { status: 'permissionError', error: { code: 'wm4031' } } }, 'changeStep to the end step')
  const byKey = await stack.send('POST', '/external/process/changeStep', {
    as: colleague,
    operationId: 'changeProcessStep',
    body: { ...TENANT_A, processId: 'leave-request', businessKey, stepId: 'cancelled' },
  })
  t.equal(byKey.status, 403, 'changeStep by business key')
  const locks = await stack.send('DELETE', `/external/locks/${stack.a.employee.userId}?appId=hr&organizationId=acme`, {
    as: colleague,
    operationId: 'releaseUserLocks',
  })
  t.match(locks, { status: 403, body: { error: { code: 'wm4031' } } }, "releasing another user's locks")
  const onBehalf = await stack.send('POST', '/external/process/start', {
    as: outsider,
    operationId: 'startExternalProcess',
    body: { ...TENANT_A, processId: 'leave-request', input: { days: 1 }, initiatorUserId: stack.a.manager.userId },
  })
  t.match(onBehalf, { status: 403, body: { error: { code: 'wm4031' } } }, 'starting a process as another user')
  const retry = await stack.send('POST', '/external/batchjob/retry', {
    as: outsider,
    operationId: 'retryFailedBatchJobs',
    body: { ...TENANT_A },
  })
  t.match(retry, { status: 403, body: { error: { code: 'wm4031' } } }, "requeueing the tenant's batch jobs")
  const resend = await stack.send('POST', '/notify/send', {
    as: outsider,
    operationId: 'sendNotification',
    body: { ...TENANT_A, processId: 'leave-request', businessKey, eventType: 'Finished' },
  })
  t.match(
    resend,
    { status: 403, body: { error: { code: 'wm4030' } } },
    'rewriting the notification of an instance one is not authorized on',
  )
  t.equal(await snapshotTenantA(stack.store), before, 'nothing changed')

  // Who may: an admin of the tenant assigns, a system user moves the instance, the assignee acts.
  const byAdmin = await stack.send('POST', `/external/task/${taskId}/assignToUser`, {
    as: stack.a.admin,
    operationId: 'assignTaskToUser',
    body: { ...TENANT_A, processInstance: processInstanceId, targetUserId: colleague.userId },
  })
  t.equal(byAdmin.status, 200, 'an admin of the tenant may assign')
  const assignee = await stack.send('POST', `/external/task/${taskId}/action/complete`, {
    as: colleague,
    operationId: 'runExternalTaskAction',
    body: { ...TENANT_A, processInstanceId, dataInstance: { days: 3 } },
  })
  t.equal(assignee.status, 200, 'the new assignee may act on the task')
  const bySystem = await stack.send('POST', '/external/process/changeStep', {
    as: stack.a.system,
    operationId: 'changeProcessStep',
    body: { ...TENANT_A, processInstanceId, stepId: 'cancelled' },
  })
  t.equal(bySystem.status, 200, 'a system user of the tenant may move the instance')
  const stored = await stack.store.collection<StoredContext>(Collections.contexts).findOne({ _id: processInstanceId })
  t.equal(stored?.processStatus, 'cancelled')
})

t.test('finding 1, other tenant: a user of tenant B reaches no instance, constant, data or function of tenant A', async (t) => {
  const stack = await startSecureStack(t)
  const { processInstanceId, taskId } = stack.resources
  const before = await snapshotTenantA(stack.store)
  for (const user of [stack.b.admin, stack.b.system, stack.b.user]) {
    const constant = await stack.send('POST', '/getConstantValue', {
      as: user,
      operationId: 'getConstantValue',
      body: { ...TENANT_A, processInstanceId, constantId: 'hr:vatRate' },
    })
    t.same(constant.body.data, {}, `${user.fullName}: no constant of A`)
    const data = await stack.send('POST', '/external/data/search/Leave%20bookings', {
      as: user,
      operationId: 'searchDataCollection',
      body: { ...TENANT_A },
    })
    t.match(data, { status: 404, body: { error: { code: 'wm3101' } } }, `${user.fullName}: no data collection of A`)
    const ownApp = await stack.send('POST', '/external/data/search/Leave%20bookings', {
      as: user,
      operationId: 'searchDataCollection',
      body: { ...TENANT_B },
    })
    t.equal(ownApp.status, 404, `${user.fullName}: A's collection is not found by naming B`)
    const fn = await stack.send('POST', '/external/function/vatOf/execute', {
      as: user,
      operationId: 'executeExternalFunction',
      body: { ...TENANT_A, inputParams: { amount: 100 } },
    })
    t.match(fn, { status: 404, body: { error: { code: 'wm3054' } } }, `${user.fullName}: no function of A runs`)
    const status = await stack.send('GET', `/process/${processInstanceId}`, { as: user, operationId: 'getProcessStatus' })
    t.match(status, { status: 404, body: { error: { code: 'wm3001' } } }, `${user.fullName}: A's instance is invisible`)
    const cancel = await stack.send('POST', `/external/task/${taskId}/action/cancel`, {
      as: user,
      operationId: 'runExternalTaskAction',
      body: { ...TENANT_B, processInstanceId },
    })
    t.equal(cancel.status, 404, `${user.fullName}: A's task cannot be ended`)
    const move = await stack.send('POST', '/external/process/changeStep', {
      as: user,
      operationId: 'changeProcessStep',
      body: { ...TENANT_A, processInstanceId, stepId: 'cancelled' },
    })
    const moveCode = move.body.error?.code
    t.ok(
      moveCode === 'wm4031' || moveCode === 'wm3131',
      `${user.fullName}: may not move, or does not find A's instance to move (its documented 400): ${move.status} ${moveCode}`,
    )
    const start = await stack.send('POST', '/external/process/start', {
      as: user,
      operationId: 'startExternalProcess',
      body: { ...TENANT_A, processId: 'leave-request', input: { days: 1 }, initiatorUserId: stack.a.employee.userId },
    })
    t.match(start, { status: 404, body: { error: { code: 'wm3002' } } }, `${user.fullName}: cannot start A's process as A's user`)
    const locks = await stack.send('DELETE', `/external/locks/${stack.a.employee.userId}`, { as: user, operationId: 'releaseUserLocks' })
    t.ok([403, 404].includes(locks.status), `${user.fullName}: A's user's locks are out of reach (${locks.status})`)
  }
  t.equal(await snapshotTenantA(stack.store), before, 'nothing of tenant A changed')
})

t.test("finding 9: listWorkflowUsers and getUserById answer the caller's tenant; nobody lists every tenant's users", async (t) => {
  const stack = await startSecureStack(t)
  const list = (path: string, as?: typeof stack.b.user, headers?: Record<string, string>) =>
    stack.send<Array<{ userId: string; appId?: string }>>('GET', path, {
      as,
      operationId: 'listWorkflowUsers',
      ...(headers ? { headers } : {}),
    })
  const everyone = await list('/user/listWorkflowUsers')
  t.match(
    everyone,
    { status: 400, body: { status: 'customerror', error: { code: 'fm4000' } } },
    'no appId, no user, no admin token: refused',
  )
  t.equal((await list('/user/listWorkflowUsers?appId=hr')).status, 400, 'nor with appId alone')
  const named = await list('/user/listWorkflowUsers?appId=hr&organizationId=acme')
  t.ok(named.status === 200 && named.body.data.every((user) => user.appId === 'hr'), 'one named tenant in development')
  const asB = await list('/user/listWorkflowUsers', stack.b.user)
  t.equal(asB.status, 200)
  t.same(asB.body.data.map((user) => user.appId).sort(), ['ledger', 'ledger', 'ledger'], "B's user sees B's users only")
  const askingForA = await list('/user/listWorkflowUsers?appId=hr&organizationId=acme', stack.b.user)
  t.same(askingForA.body.data, [], "naming A's tenant finds nothing")
  const aUser = await stack.send('GET', `/user/getUserById/${stack.a.employee.userId}`, { as: stack.b.user, operationId: 'getUserById' })
  t.equal(aUser.body.data, null, "A's user is not found by B")
  const own = await stack.send<{ userId: string }>('GET', `/user/getUserById/${stack.b.admin.userId}`, {
    as: stack.b.user,
    operationId: 'getUserById',
  })
  t.equal(own.body.data?.userId, stack.b.admin.userId, "B's own users are")
  t.equal((await list('/user/listWorkflowUsers', undefined, { user: 'no-such-user' })).status, 401, 'an unknown user is refused')
})

const MODEL_FETCHES = [undefined, ADMIN_TOKEN].flatMap((token) =>
  ['leave-request', 'leave-request/bpmn'].map((path) => [token, path] as const),
)

t.test(
  'finding 9: getModel and its BPMN export hand a model (function definitions too) to a user of its app or the admin token only',
  async (t) => {
    for (const [adminToken, model] of MODEL_FETCHES) {
      const stack = await startSecureStack(t, adminToken ? { config: { adminToken } } : {})
      const get = (path: string, as?: typeof stack.b.user, headers?: Record<string, string>) =>
        stack.send('GET', path, { as, ...(headers ? { headers } : {}) })
      const anonymous = await get(`/model/getModel/${model}?appId=hr`)
      t.match(anonymous, { status: 401, body: { status: 'permissionError', error: { code: 'fm4012' } } }, 'nobody gets it')
      t.notMatch(anonymous.text, /functions|bookLeave/, 'no function definition in the answer')
      t.equal((await get(`/model/getModel/${model}`)).status, 401, 'nor without naming the app')
      const other = await get(`/model/getModel/${model}?appId=hr`, stack.b.admin)
      t.match(other, { status: 404, body: { error: { code: 'fm3027' } } }, 'a user of another tenant does not find it')
      t.equal((await get(`/model/getModel/${model}`, stack.b.admin)).status, 404, 'nor without naming the app')
      const own = await get(`/model/getModel/${model}?appId=hr`, stack.a.outsider)
      t.equal(own.status, 200, 'a user of the app gets it')
      t.match(own.text, /bookLeave/)
      if (adminToken) {
        const admin = await get(`/model/getModel/${model}?appId=hr`, undefined, { authorization: `Bearer ${adminToken}` })
        t.equal(admin.status, 200, 'the admin token sees every tenant')
        const users = await stack.send<unknown[]>('GET', '/user/listWorkflowUsers', {
          headers: { authorization: `Bearer ${adminToken}` },
          operationId: 'listWorkflowUsers',
        })
        t.ok(users.body.data.length >= 13, "and lists every tenant's users")
        t.equal(
          (await get(`/model/getModel/${model}?appId=hr`, undefined, { authorization: 'Bearer not-the-admin-token-at-all' })).status,
          401,
          'a wrong token is nobody',
        )
      }
    }
    t.equal(TENANT_B.appId, 'ledger')
  },
)
