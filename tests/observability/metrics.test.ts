import t from 'tap'
import { Collections } from '../../store/collections.js'
import { startService, testConfig } from '../../services/testing/harness.js'
import { completeTask, HR, openForm, startHrEngine, startLeaveRequest } from '../../services/testing/workflow.js'
import { setConstant } from '../../services/testing/models.js'
import { labelNames, parseExposition, sampleValue, scrape } from './exposition.js'

const LEAVE = { process_id: 'leave-request' }

t.test('after a whole leave request the engine metrics moved by exactly the expected amounts', async (t) => {
  const engine = await startHrEngine(t)
  const { employee, manager } = engine.users
  const before = await scrape(engine.url)
  t.equal(sampleValue(before, 'workflow_process_instances_started_total', LEAVE), undefined, 'nothing counted yet')

  const started = await startLeaveRequest(engine, employee, { days: 3, reason: 'Family visit' })
  const mid = await scrape(engine.url)
  t.equal(sampleValue(mid, 'workflow_tasks_open', { ...LEAVE, step_id: 'request' }), 1, 'the request task is open')
  const submitted = await completeTask(engine, employee, started.body, { dataInstance: { days: 3, reason: 'Family visit' } })
  const opened = await openForm(engine, manager, submitted.body)
  const approved = await completeTask(engine, manager, opened.body)
  t.equal(approved.body.context.processInstance.processStatus, 'completed')

  const after = await scrape(engine.url)
  t.equal(sampleValue(after, 'workflow_process_instances_started_total', LEAVE), 1)
  t.equal(sampleValue(after, 'workflow_process_instances_ended_total', { ...LEAVE, status: 'completed' }), 1)
  t.equal(sampleValue(after, 'workflow_process_instances_failed_total', LEAVE), undefined, 'nothing failed')
  for (const step of ['request', 'approve']) {
    t.equal(
      sampleValue(after, 'workflow_tasks_completed_total', { ...LEAVE, step_id: step, action_type: 'complete' }),
      1,
      `${step} completed once`,
    )
    t.equal(sampleValue(after, 'workflow_task_duration_seconds_count', { ...LEAVE, step_id: step }), 1, `${step} open time measured once`)
    t.equal(sampleValue(after, 'workflow_tasks_open', { ...LEAVE, step_id: step }), 0, `${step} no longer open`)
  }
  for (const functionId of ['bookLeave', 'updatePayroll', 'informTeam']) {
    t.equal(
      sampleValue(after, 'workflow_flow_function_duration_seconds_count', { function_id: functionId, outcome: 'ok' }),
      1,
      `${functionId} ran once`,
    )
  }
  const route = (url: string) => ({ http_route: url, http_request_method: 'POST', http_response_status_code: '200' })
  t.equal(sampleValue(after, 'http_server_request_duration_seconds_count', route('/context')), 2, 'start and open form')
  t.equal(sampleValue(after, 'http_server_request_duration_seconds_count', route('/action/complete')), 2)
  // The instances themselves are handed over from the embedded store's memory without a read (store/port.ts heldDocument).
  t.ok(
    (sampleValue(after, 'workflow_store_operation_duration_seconds_count', { collection: Collections.taskLocks, operation: 'findOne' }) ??
      0) > 0,
    'store reads measured',
  )
  t.ok(
    (sampleValue(after, 'workflow_store_operation_duration_seconds_count', { collection: 'atomic', operation: 'applyAtomically' }) ?? 0) >=
      3,
    'each change is one atomic batch',
  )
  t.ok((sampleValue(after, 'workflow_journal_commit_duration_seconds_count') ?? 0) > 0, 'journal commits measured')
  t.ok((sampleValue(after, 'workflow_journal_batch_writes_count') ?? 0) > 0)
  t.equal(sampleValue(after, 'workflow_batch_jobs', { status: 'waiting' }), 0)
  t.equal(sampleValue(after, 'workflow_batch_jobs', { status: 'failed' }), 0)
  t.ok(sampleValue(after, 'process_cpu_seconds_total') !== undefined, 'default process metrics')
  t.ok(sampleValue(after, 'nodejs_eventloop_lag_seconds') !== undefined)
  t.ok(after.some((sample) => sample.name === 'workflow_schedule_firings_total'))
  t.equal(
    sampleValue(after, 'workflow_flow_function_runs_moved_to_pool_total', { reason: 'inlineOff' }),
    undefined,
    'every run stayed inline',
  )

  const instanceId = approved.body.context.processInstance.processInstanceId
  const taskIds = approved.body.context.processInstance.tasks.map((task) => task.taskId)
  const values = new Set(after.flatMap((sample) => Object.values(sample.labels)))
  for (const id of [instanceId, ...taskIds, employee.userId, manager.userId]) t.notOk(values.has(id), `no label carries the id ${id}`)
  t.same([...labelNames(after, 'http_server_request_duration_seconds_count')].sort(), [
    'http_request_method',
    'http_response_status_code',
    'http_route',
  ])
})

t.test('a function that fails with a business error shows as outcome="business" and fails its instance', async (t) => {
  const engine = await startHrEngine(t)
  const { employee, manager } = engine.users
  await setConstant(engine.store, HR, 'payrollOnline', 'no')
  const started = await startLeaveRequest(engine, employee, { days: 2 })
  const submitted = await completeTask(engine, employee, started.body, { dataInstance: { days: 2 } })
  const approved = await completeTask(engine, manager, (await openForm(engine, manager, submitted.body)).body)
  t.equal(approved.body.context.processInstance.processStatus, 'failed')
  const after = await scrape(engine.url)
  t.equal(sampleValue(after, 'workflow_flow_function_duration_seconds_count', { function_id: 'updatePayroll', outcome: 'business' }), 1)
  t.equal(sampleValue(after, 'workflow_flow_function_duration_seconds_count', { function_id: 'updatePayroll', outcome: 'ok' }), undefined)
  t.equal(sampleValue(after, 'workflow_process_instances_failed_total', LEAVE), 1)
  t.equal(sampleValue(after, 'workflow_process_instances_ended_total', { ...LEAVE, status: 'completed' }), undefined)
})

t.test('flow-function runs that go to the worker pool are counted by why', async (t) => {
  // FLOW_INLINE_BUDGET_MS=0: every run goes to the pool; on the engine's thread (the first test) none does.
  const engine = await startHrEngine(t, { flowInlineBudgetMs: 0 })
  const { employee, manager } = engine.users
  const started = await startLeaveRequest(engine, employee, { days: 2 })
  const submitted = await completeTask(engine, employee, started.body, { dataInstance: { days: 2 } })
  const approved = await completeTask(engine, manager, (await openForm(engine, manager, submitted.body)).body)
  t.equal(approved.body.context.processInstance.processStatus, 'completed')
  const after = await scrape(engine.url)
  const ran = ['bookLeave', 'updatePayroll', 'informTeam'].map(
    (functionId) => sampleValue(after, 'workflow_flow_function_duration_seconds_count', { function_id: functionId, outcome: 'ok' }) ?? 0,
  )
  t.same(ran, [1, 1, 1], 'the functions ran, in the pool')
  const runs = after
    .filter((sample) => sample.name === 'workflow_flow_function_duration_seconds_count')
    .reduce((sum, sample) => sum + sample.value, 0)
  t.equal(sampleValue(after, 'workflow_flow_function_runs_moved_to_pool_total', { reason: 'inlineOff' }), runs, 'each run, counted once')
})

t.test(
  "the open-task gauge starts from the store: tasks opened before the engine started are counted, a suspended instance's too",
  async (t) => {
    const first = await startHrEngine(t)
    await startLeaveRequest(first, first.users.employee)
    const waiting = await startLeaveRequest(first, first.users.colleague)
    const suspended = await first.call(
      'suspendProcess',
      'POST',
      `/process/${waiting.body.context.processInstance.processInstanceId}/suspend`,
      {
        user: first.users.admin.userId,
        body: { ...HR, reason: 'Audit' },
      },
    )
    t.equal(suspended.status, 200, 'one of the two instances is suspended')
    const second = await startService(t, 'engine', { store: first.store })
    t.equal(sampleValue(await scrape(second.url), 'workflow_tasks_open', { ...LEAVE, step_id: 'request' }), 2)
  },
)

t.test('the gateway measures its requests and the engine behind it, and counts an unreachable engine by code', async (t) => {
  const engine = await startHrEngine(t)
  const gateway = await startService(t, 'gateway', { store: engine.store, config: { engineUrl: engine.url } })
  const started = await startLeaveRequest(engine, engine.users.employee)
  const instanceId = started.body.context.processInstance.processInstanceId
  const status = await fetch(`${gateway.url}/process/${instanceId}?appId=hr&organizationId=acme`, {
    headers: { user: engine.users.employee.userId },
  })
  t.equal(status.status, 200)
  let samples = await scrape(gateway.url)
  const route = { http_route: '/process/:processInstanceId' }
  t.equal(sampleValue(samples, 'workflow_proxy_upstream_duration_seconds_count', route), 1)
  t.equal(
    sampleValue(samples, 'http_server_request_duration_seconds_count', {
      ...route,
      http_request_method: 'GET',
      http_response_status_code: '200',
    }),
    1,
  )

  const orphan = await startService(t, 'gateway', { store: engine.store, config: { engineUrl: 'http://127.0.0.1:9' } })
  const refused = await fetch(`${orphan.url}/process/${instanceId}?appId=hr&organizationId=acme`, {
    headers: { user: engine.users.employee.userId },
  })
  t.equal(refused.status, 502)
  samples = await scrape(orphan.url)
  t.equal(sampleValue(samples, 'workflow_proxy_upstream_errors_total', { code: 'fm5020' }), 1)
  t.ok(sampleValue(samples, 'process_cpu_seconds_total') !== undefined)
})

t.test('with METRICS_TOKEN the exposition needs the bearer token, on both services', async (t) => {
  const token = 'scrape-me-please-0123456789'
  for (const kind of ['engine', 'gateway'] as const) {
    const { url } = await startService(t, kind, { config: { telemetry: { ...testConfig().telemetry, metricsToken: token } } })
    const missing = await fetch(`${url}/metrics`)
    t.equal(missing.status, 401, `${kind}: no token`)
    const wrong = await fetch(`${url}/metrics`, { headers: { authorization: 'Bearer not-the-token-at-all' } })
    t.equal(wrong.status, 401, `${kind}: wrong token`)
    const body = (await wrong.json()) as Record<string, unknown>
    t.match(JSON.stringify(body), kind === 'engine' ? 'wm4014' : 'fm4014')
    const right = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${token}` } })
    t.equal(right.status, 200, `${kind}: the token opens it`)
    t.match(right.headers.get('content-type'), /^text\/plain/)
    t.ok(parseExposition(await right.text()).length > 0)
  }
})

t.test('with METRICS_ENABLED=false nothing is measured and /metrics is 404', async (t) => {
  for (const kind of ['engine', 'gateway'] as const) {
    const { url, app } = await startService(t, kind, { config: { telemetry: { ...testConfig().telemetry, metricsEnabled: false } } })
    t.equal((await fetch(`${url}/metrics`)).status, 404, kind)
    t.equal(app.engineMetrics, null)
    t.equal(app.gatewayMetrics, null)
  }
})
