/**
 * The services the malformed-input sweep talks to: an engine and a gateway built as in production,
 * sharing one embedded store (as the all-in-one does), with the HR example app deployed, its users,
 * and a fresh leave request (with an uploaded file and a note) for each operation, so that path and
 * body ids are real and the handlers get past their lookups.
 */
import { randomUUID } from 'node:crypto'
import type { Test } from 'tap'
import type { OpenApiDocument } from '../../../plugins/docs/plugin.js'
import { LogRing } from '../../../plugins/logging/ring.js'
import type { StoredUser } from '../../../store/collections.js'
import { capturingLogger, openTestStore, startService } from '../../../services/testing/harness.js'
import type { GeneratedRequest } from '../../../services/testing/openapi-requests.js'
import { createTestUser } from '../../../services/testing/users.js'
import { createHrUsers, deployHrApp, HR, type HrUsers } from '../../../services/testing/workflow.js'
import { bodyProperties } from './malformed.js'

export const ADMIN_TOKEN = 'sweep-admin-token-0123456789abcdef'

export interface SweepServices {
  gatewayUrl: string
  engineUrl: string
  users: HrUsers
  /** A user the sweep's user-management requests may change or delete. */
  victim: StoredUser
  /** Error lines the services logged (their 500s name the cause there). */
  errorLines: Array<Record<string, unknown>>
}

/** The real ids of one running leave request, for one operation's requests. */
export interface InstanceIds {
  processInstanceId: string
  businessKey: string
  taskId: string
  storageHandle: string
  noteId: string
}

export async function startSweepServices(t: Test): Promise<SweepServices> {
  const store = await openTestStore(t)
  await deployHrApp(store)
  const users = await createHrUsers(store)
  const victim = await createTestUser(store, { ...HR, fullName: 'Vic Victim', swimlanes: ['employee'] })
  const { logger, lines } = capturingLogger('error')
  const engineRing = new LogRing()
  const engine = await startService(t, 'engine', { store, logger, logRings: { wfm: engineRing } })
  const gateway = await startService(t, 'gateway', {
    store,
    logger,
    config: {
      engineUrl: engine.url,
      adminToken: ADMIN_TOKEN,
      studioTokenSecret: 'sweep-studio-secret-0123456789abcdef',
      deploymentEnv: 'test',
    },
  })
  return { gatewayUrl: gateway.url, engineUrl: engine.url, users, victim, errorLines: lines }
}

/**
 * The headers that identify the sweep's caller. The one place to change when identity rules change
 * (e.g. a bearer token in AUTH_MODE=jwt): every request of the sweep goes through it.
 */
export function sweepIdentity(services: SweepServices, request: Pick<GeneratedRequest, 'adminToken'>): Record<string, string> {
  return { user: services.users.employee.userId, ...(request.adminToken ? { authorization: `Bearer ${ADMIN_TOKEN}` } : {}) }
}

async function postJson(services: SweepServices, path: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${services.gatewayUrl}${path}`, {
    method: 'POST',
    headers: { ...sweepIdentity(services, { adminToken: false }), 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  const answer = (await response.json()) as { data: Record<string, unknown> }
  if (response.status !== 200) throw new Error(`setup ${path} answered ${response.status}: ${JSON.stringify(answer)}`)
  return answer.data
}

/** Starts a leave request as the sweep's caller, uploads a file to it and adds a note. */
export async function freshInstance(services: SweepServices): Promise<InstanceIds> {
  const session = (await postJson(services, '/context', { ...HR, processId: 'leave-request', input: { days: 3, reason: 'Sweep' } })) as {
    context: { processInstance: { processInstanceId: string; businessKey: string } }
    formContext: { task?: { taskId: string } }
  }
  const { processInstanceId, businessKey } = session.context.processInstance
  const taskId = session.formContext.task?.taskId
  if (!taskId) throw new Error('the leave request opened no task for its initiator')
  const ids = { ...HR, processId: 'leave-request', processInstanceId, businessKey, taskId }
  const form = new FormData()
  form.append('fields', JSON.stringify({ ...ids, taskDefinitionKey: 'request', label: 'Sweep file', fileName: 'sweep.txt' }))
  form.append('fileBody', new Blob(['sweep file']), 'sweep.txt')
  const uploaded = await fetch(`${services.gatewayUrl}/file/upload`, {
    method: 'POST',
    headers: sweepIdentity(services, { adminToken: false }),
    body: form,
  })
  const file = (await uploaded.json()) as { data: { storageHandle: string } }
  if (uploaded.status !== 200) throw new Error(`setup upload answered ${uploaded.status}: ${JSON.stringify(file)}`)
  const noted = (await postJson(services, '/note/add', { ...ids, note: 'Sweep note' })) as {
    context: { processInstance: { notes?: Array<{ id: string }> } }
  }
  const noteId = noted.context.processInstance.notes?.[0]?.id ?? randomUUID()
  return { processInstanceId, businessKey, taskId, storageHandle: file.data.storageHandle, noteId }
}

type Bindings = Partial<Record<'path' | 'query' | 'header' | 'body', Record<string, unknown>>>

/** The real values the requests of an operation carry in place of generated ones. */
export function bindingsFor(services: SweepServices, operationId: string, ids: InstanceIds): Bindings {
  const employee = services.users.employee.userId
  const ownIds = {
    appId: HR.appId,
    organizationId: HR.organizationId,
    processId: 'leave-request',
    processInstanceId: ids.processInstanceId,
    businessKey: ids.businessKey,
    taskId: ids.taskId,
  }
  const common: Bindings = {
    path: {
      ...ownIds,
      userId: employee,
      id: 'leave-request',
      functionId: 'suggestDates',
      collection: 'Leave bookings',
      actionType: 'complete',
      service: 'wfm',
      file: 'app',
    },
    query: { appId: HR.appId, organizationId: HR.organizationId },
    header: { lplogclientid: 'sweep-client', referer: `http://localhost/portal?appId=${HR.appId}` },
    body: {
      ...ownIds,
      processInstance: ids.processInstanceId,
      processInstances: [ids.processInstanceId],
      taskDefinitionKey: 'request',
      storageHandle: ids.storageHandle,
      noteId: ids.noteId,
      note: 'Sweep note',
      constantId: `${HR.appId}:vatRate`,
      initiatorUserId: employee,
      targetUserId: employee,
      userId: employee,
      swimlane: 'employee',
      stepId: 'request',
      input: { days: 2, reason: 'Sweep' },
    },
  }
  const specific: Record<string, Bindings> = {
    // User management acts on a user of its own, so the sweep's caller keeps existing.
    createUser: { body: { userId: randomUUID() } },
    updateUser: { body: { userId: services.victim.userId } },
    deleteUser: { body: { id: services.victim.userId } },
    updateNote: { body: { note: { id: ids.noteId, note: 'Sweep note, changed' } } },
    runActionFunction: { body: { customType: 'checkBalance' } },
    executeExternalFunction: { path: { functionId: 'vatOf' } },
  }
  const extra = specific[operationId] ?? {}
  return {
    path: { ...common.path, ...extra.path },
    query: { ...common.query, ...extra.query },
    header: { ...common.header, ...extra.header },
    body: { ...common.body, ...extra.body },
  }
}

/** The request with the real values of `bindings` wherever the operation has a field of that name. */
export function bind(document: OpenApiDocument, request: GeneratedRequest, bindings: Bindings): GeneratedRequest {
  const values = { path: { ...request.values.path }, query: { ...request.values.query }, header: { ...request.values.header } }
  for (const parameter of request.parameters) {
    const bound = bindings[parameter.in]?.[parameter.name]
    if (bound !== undefined) values[parameter.in][parameter.name] = String(bound)
  }
  let body = request.body
  if (request.bodySchema && body !== null && typeof body === 'object' && !Array.isArray(body)) {
    const properties = bodyProperties(document, request.bodySchema)
    body = { ...body }
    for (const name of Object.keys(properties)) {
      const bound = bindings.body?.[name]
      if (bound !== undefined) (body as Record<string, unknown>)[name] = bound
    }
  }
  return { ...request, values, body }
}
