/**
 * A leave request end to end through the SDK, against a running gateway:
 *
 *   make run                                          # the all-in-one on :3000
 *   npm run example                                   # GATEWAY_URL, else http://127.0.0.1:3000
 *
 * It creates an employee and a manager (`/user/createUser`), deploys the HR example models
 * (`/model/insertModel`: the leave-request process, its form, constants, function library and the
 * leave-bookings collection), then the employee requests three days of leave (`/context`,
 * `/action/complete`), the manager opens and approves it, and the process status shows it finished
 * (`GET /process/{processInstanceId}`); run as a script, it removes the two users again at the end,
 * however the run ends, so it can run again and again. Set ADMIN_TOKEN when the gateway has one, and JWT_SECRET
 * when it runs AUTH_MODE=jwt with that secret: the example then signs each user's bearer token
 * itself, as an identity provider would (the SDK's `token` option).
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { examplesDir } from '../../lib/server/paths.js'
import { SignJWT } from 'jose'
import { type ExtraHeaders, type ResponseData, type Schemas, WorkflowClient } from '../../sdk/client.js'

/** The example models of the HR app that a leave request needs, deployed in this order. */
export const HR_MODELS = ['hr-constants', 'hr-lib', 'leave-bookings', 'leave-form', 'leave-request'] as const

export interface LeaveRequestOptions {
  /** The gateway, e.g. `http://127.0.0.1:3000`. */
  baseUrl: string
  organizationId?: string
  appId?: string
  /** The gateway's ADMIN_TOKEN, when it has one (users and models are admin endpoints). */
  adminToken?: string
  /**
   * The bearer token of a user, for a gateway in AUTH_MODE=jwt (asked before each request, for
   * the user selected at that moment); none in header mode.
   */
  tokenFor?: (userId: string) => string | Promise<string>
  /** Where the example models are read from (default: the repository's examples/). */
  modelsDir?: string
  /**
   * Remove the two users again at the end, however the run ends (`npm run example` does, so that
   * nothing of a run is left behind but its instance); callers that go on with them keep them.
   */
  removeUsers?: boolean
  /** Told each step as it happens. */
  log?: (line: string) => void
}

export interface LeaveRequestOutcome {
  processInstanceId: string
  businessKey: string
  employee: Schemas['User']
  manager: Schemas['User']
  /** `GET /process/{processInstanceId}` after the approval. */
  finalStatus: ResponseData<'/process/{processInstanceId}', 'get'>
  /** The data of the finished instance, as the manager's completion answered it. */
  dataInstance: Record<string, unknown>
}

type Session = Schemas['Session']

/** The open task a session's form is about; a session without one means the flow went wrong. */
function openTask(session: Session, expectedStep: string): NonNullable<Session['formContext']['task']> {
  const task = session.formContext.task
  if (task?.stepId !== expectedStep)
    throw new Error(`expected the ${expectedStep} task to be open, the session shows ${JSON.stringify(session.formContext)}`)
  return task
}

export async function runLeaveRequest(options: LeaveRequestOptions): Promise<LeaveRequestOutcome> {
  const log = options.log ?? (() => undefined)
  const { tokenFor } = options
  const client: WorkflowClient = new WorkflowClient({
    baseUrl: options.baseUrl,
    organizationId: options.organizationId ?? 'acme',
    appId: options.appId ?? 'hr',
    ...(tokenFor ? { token: () => (client.userId === undefined ? '' : tokenFor(client.userId)) } : {}),
  })
  const admin: { headers?: ExtraHeaders } = options.adminToken ? { headers: { authorization: `Bearer ${options.adminToken}` } } : {}

  // Full names are unique per gateway: a suffix lets the example run again on the same store.
  const run = Math.random().toString(36).slice(2, 8)
  const createUser = (fullName: string, swimlanes: string[]) =>
    client.post('/user/createUser', {
      ...admin,
      body: { fullName: `${fullName} ${run}`, unit: { id: 'u-hr', name: 'Human resources' }, roles: ['user'], swimlanes },
    })
  const employee = await createUser('Eve Employee', ['employee'])
  const removeUser = (user: Schemas['User']) => client.delete('/user/deleteUser', { ...admin, body: { id: user.userId } })
  const manager = await createUser('Max Manager', ['manager']).catch(async (error: unknown) => {
    if (options.removeUsers) await removeUser(employee)
    throw error
  })
  log(`created users ${employee.userId} (employee) and ${manager.userId} (manager)`)
  if (!options.removeUsers) return runWith(client, admin, employee, manager, log, options.modelsDir)
  try {
    return await runWith(client, admin, employee, manager, log, options.modelsDir)
  } finally {
    client.selectUser(undefined)
    await removeUser(employee)
    await removeUser(manager)
    log(`removed users ${employee.userId} and ${manager.userId}`)
  }
}

async function runWith(
  client: WorkflowClient,
  admin: { headers?: ExtraHeaders },
  employee: Schemas['User'],
  manager: Schemas['User'],
  log: (line: string) => void,
  modelsDir = examplesDir,
): Promise<LeaveRequestOutcome> {
  for (const name of HR_MODELS) {
    const model = JSON.parse(readFileSync(join(modelsDir, `${name}.json`), 'utf8')) as Schemas['Model']
    const outcome = await client.post('/model/insertModel', { ...admin, body: { model, live: true } })
    log(`deployed ${name} (${outcome})`)
  }

  client.selectUser(employee.userId)
  const started = await client.post('/context', { body: { processId: 'leave-request', input: { days: 3, reason: 'Family visit' } } })
  const instance = started.context.processInstance
  const request = openTask(started, 'request')
  log(`started ${instance.businessKey} (${instance.processInstanceId}); ${request.name} is open`)

  const submitted = await client.post('/action/complete', {
    body: {
      processId: 'leave-request',
      processInstanceId: instance.processInstanceId,
      businessKey: instance.businessKey,
      taskId: request.taskId,
      actionType: 'complete',
      dataInstance: { ...started.context.dataInstance, days: 3, reason: 'Family visit' },
    },
  })
  log(`submitted; next: ${openTask(submitted, 'approve').name}`)

  client.selectUser(manager.userId)
  const opened = await client.post('/context', {
    body: { processId: 'leave-request', processInstanceId: instance.processInstanceId, skipToForm: true },
  })
  const approval = openTask(opened, 'approve')
  if (opened.formContext.readOnly) throw new Error(`the manager cannot work on ${approval.name}: ${JSON.stringify(opened.formContext)}`)
  const approved = await client.post('/action/complete', {
    body: {
      processId: 'leave-request',
      processInstanceId: instance.processInstanceId,
      businessKey: instance.businessKey,
      taskId: approval.taskId,
      actionType: 'complete',
      dataInstance: opened.context.dataInstance,
    },
  })
  log(`approved by ${manager.fullName ?? manager.userId}`)

  const finalStatus = await client.get('/process/{processInstanceId}', {
    params: { path: { processInstanceId: instance.processInstanceId } },
  })
  log(`process status: ${finalStatus.processStatus}`)
  return {
    processInstanceId: instance.processInstanceId,
    businessKey: instance.businessKey,
    employee,
    manager,
    finalStatus,
    dataInstance: approved.context.dataInstance,
  }
}

/** A signer of short-lived HS256 tokens naming a user (`sub`), as a gateway with JWT_SECRET accepts them. */
export function hs256Tokens(secret: string): (userId: string) => Promise<string> {
  const key = new TextEncoder().encode(secret)
  return (userId) => new SignJWT({ sub: userId }).setProtectedHeader({ alg: 'HS256' }).setIssuedAt().setExpirationTime('5m').sign(key)
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const baseUrl = process.argv[2] ?? process.env.GATEWAY_URL ?? 'http://127.0.0.1:3000'
  // A newcomer's first failure is a gateway that is not running: say so rather than show a stack.
  const reachable = await fetch(new URL('/liveness', baseUrl)).then(
    () => true,
    () => false,
  )
  if (!reachable) {
    console.error(`No gateway answers at ${baseUrl}: start the service with \`make run\` (or set GATEWAY_URL).`)
    process.exit(1)
  }
  const outcome = await runLeaveRequest({
    baseUrl,
    ...(process.env.ADMIN_TOKEN ? { adminToken: process.env.ADMIN_TOKEN } : {}),
    ...(process.env.JWT_SECRET ? { tokenFor: hs256Tokens(process.env.JWT_SECRET) } : {}),
    removeUsers: true,
    log: (line) => console.log(line),
  })
  console.log(
    JSON.stringify({
      processInstanceId: outcome.processInstanceId,
      businessKey: outcome.businessKey,
      processStatus: outcome.finalStatus.processStatus,
    }),
  )
}
