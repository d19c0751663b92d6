/**
 * Makes the data directory of the upgrade test (tests/upgrade/fixtures/previous-release/) with a
 * BUILT checkout of an earlier release: it starts that release's all-in-one on the directory,
 * drives it through its gateway like a client would, and stops it (SIGTERM, so the store is
 * flushed and closed).
 *
 *   git worktree add --detach /tmp/prev <commit> && (cd /tmp/prev && make build)
 *   make build && node dist/scripts/upgrade/make-fixture.js /tmp/prev tests/upgrade/fixtures/previous-release
 *
 * What it leaves in tenant acme/hr: the example models (hr-constants, hr-lib, leave-bookings,
 * leave-form, leave-request, hr-settings, the hr-nightly jobScheduler with its deployed schedule),
 * an employee, a manager and an admin, one leave request run to its end (its booking is in the leave-bookings
 * data collection), one submitted and waiting for the manager's approval.
 */
import { spawn } from 'node:child_process'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'

const [releaseDir, outDir] = process.argv.slice(2).map((path) => resolve(path))

if (!releaseDir || !outDir) {
  process.stderr.write('usage: make-fixture.js <built release checkout> <data directory to write>\n')
  process.exit(2)
}
const GATEWAY_PORT = Number(process.env.FIXTURE_GATEWAY_PORT ?? 3870)
const ENGINE_PORT = Number(process.env.FIXTURE_ENGINE_PORT ?? 3871)
const BASE = `http://127.0.0.1:${GATEWAY_PORT}`
const TENANT = { organizationId: 'acme', appId: 'hr' }
const MODELS = ['hr-constants', 'hr-lib', 'leave-bookings', 'leave-form', 'leave-request', 'hr-settings', 'hr-nightly']

rmSync(outDir, { recursive: true, force: true })
mkdirSync(outDir, { recursive: true })
const service = spawn(process.execPath, [join(releaseDir, 'dist/services/all-in-one.js')], {
  cwd: releaseDir,
  env: { ...process.env, DATA_DIR: outDir, GATEWAY_PORT: String(GATEWAY_PORT), ENGINE_PORT: String(ENGINE_PORT), LOG_LEVEL: 'warn' },
  stdio: ['ignore', 'inherit', 'inherit'],
})
const exited = new Promise<number | null>((done) => service.once('exit', (code) => done(code)))

interface Call {
  user?: string
  body?: unknown
}

// The answers are read as the previous release's contract gives them; only the fields used are named.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Answer = any

async function call(method: string, path: string, { user, body }: Call = {}): Promise<Answer> {
  const headers = { ...(user ? { user } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) }
  const response = await fetch(`${BASE}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
  const text = await response.text()
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`)
  return (JSON.parse(text) as { data: Answer }).data
}

async function until(what: string, check: () => Promise<unknown>): Promise<unknown> {
  for (let tries = 0; tries < 200; tries++) {
    const value = await check().catch(() => undefined)
    if (value) return value
    await sleep(100)
  }
  throw new Error(`gave up waiting for ${what}`)
}

try {
  await until('the gateway', () => fetch(`${BASE}/readiness`).then((response) => response.ok))
  for (const name of MODELS) {
    const model = JSON.parse(readFileSync(join(releaseDir, 'examples', `${name}.json`), 'utf8')) as Record<string, unknown>
    await call('POST', '/model/insertModel', { body: { model: { ...model, ...TENANT }, live: true, ...TENANT } })
  }
  const user = (fullName: string, swimlanes: string[], roles = ['user']): Promise<Answer> =>
    call('POST', '/user/createUser', {
      body: { ...TENANT, fullName, unit: { id: 'hr', name: 'Human resources' }, roles, swimlanes },
    })
  const employee = await user('Eve Employee', ['employee'])
  const manager = await user('Max Manager', ['manager'])
  const admin = await user('Ada Admin', [], ['admin'])

  async function submitLeave(days: number): Promise<{ processInstanceId: string; businessKey: string }> {
    const started = await call('POST', '/context', {
      user: employee.userId,
      body: { ...TENANT, processId: 'leave-request', input: { days, reason: `Leave of ${days} days` } },
    })
    const { processInstanceId, businessKey } = started.context.processInstance as { processInstanceId: string; businessKey: string }
    await call('POST', '/action/complete', {
      user: employee.userId,
      body: {
        ...TENANT,
        processId: 'leave-request',
        processInstanceId,
        businessKey,
        taskId: started.formContext.task.taskId,
        actionType: 'complete',
        dataInstance: started.context.dataInstance,
      },
    })
    return { processInstanceId, businessKey }
  }
  const finished = await submitLeave(3)
  const opened = await call('POST', '/context', {
    user: manager.userId,
    body: { ...TENANT, processId: 'leave-request', processInstanceId: finished.processInstanceId, skipToForm: true },
  })
  await call('POST', '/action/complete', {
    user: manager.userId,
    body: {
      ...TENANT,
      processId: 'leave-request',
      ...finished,
      taskId: opened.formContext.task.taskId,
      actionType: 'complete',
      dataInstance: opened.context.dataInstance,
    },
  })
  const waiting = await submitLeave(5)
  // The jobScheduler model's deploy job runs in the engine's batch worker: its schedule is stored once it is done.
  await until('the schedule deploy', async () => {
    const page = await call('POST', '/external/batchjob/list', { user: admin.userId, body: {} })
    return (page.items as Array<{ kind: string; status: string }>).some((job) => job.kind === 'deploy' && job.status === 'done')
  })
  writeFileSync(
    join(outDir, '..', 'previous-release.json'),
    `${JSON.stringify({ employee: employee.userId, manager: manager.userId, admin: admin.userId, finished, waiting }, null, 2)}\n`,
  )
} finally {
  service.kill('SIGTERM')
  await exited
}
