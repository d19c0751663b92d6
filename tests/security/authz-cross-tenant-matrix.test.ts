/**
 * The cross-tenant route matrix, generated from the OpenAPI documents: every route the gateway
 * forwards to the engine (the `x-proxy` table, expanded into proxyRoutes), called by users of
 * tenant B on tenant A's resources — A's instance, task, locks' owner, constants, data collection
 * and functions — in two forms: naming A's tenant in the body/query, and naming B's own. Every
 * answer is 403/404 (or the documented status of a missing instance), the few reads that are
 * scoped to the caller answer nothing of A, and A's stored state is unchanged after each request.
 * The credentials come from the stack (the `user` header in header mode).
 */
import t from 'tap'
import { proxyRoutes } from '../../openapi/generated/proxy-routes.js'
import type { StoredUser } from '../../store/collections.js'
import { ContractChecker } from '../../services/testing/contract.js'
import { bearerIdentity, jwtAuthConfig } from '../../services/testing/tokens.js'
import { snapshotTenantA, startSecureStack, type TenantAResources, TENANT_A, TENANT_B } from './authz-stack.js'

type Schema = { $ref?: string; type?: string; enum?: unknown[]; properties?: Record<string, Schema>; required?: string[] }
type Operation = { requestBody?: { content?: Record<string, { schema?: Schema }> } }

const gateway = new ContractChecker('gateway')
const document = gateway.document as unknown as {
  paths: Record<string, Record<string, Operation>>
  components: { schemas: Record<string, Schema> }
}

/**
 * Operations that work only in the caller's tenant: a 200 is allowed when it carries nothing of A
 * (a bulk job queued by B works through B's instances; tests/process-control/bulk.test.ts runs one).
 */
const CALLER_SCOPED_READS = new Set([
  'listNotifications',
  'queryActiveProcesses',
  'queryProcessesUpdatedBetween',
  'queryProcessInstanceContextAndActivity',
  'queryOverdueTasks',
  'queryMyTasks',
  'queryInstances',
  'queryIncidents',
  'listBatchJobs',
  'getConstantValue',
  'retryFailedBatchJobs',
  'startBulkOperation',
  'fetchAndLockExternalTasks',
])
/** Secrets that are also a key of an operation's own answer: a page (of batch jobs, tasks, instances...) is `{ items, nextCursor }`. */
const OWN_ANSWER_KEYS: Record<string, string[]> = Object.fromEntries(
  ['listBatchJobs', 'queryMyTasks', 'queryInstances', 'queryIncidents'].map((operationId) => [operationId, ['"items"']]),
)
/** Bodies that name one target of two: the field left out (a purge names A's instance, not a filter). */
const LEFT_OUT: Record<string, string> = { purgeProcessInstances: 'filter' }
/** An instance that cannot be found to move answers 400 (wm3131, docs/reference/http.md#unusual-statuses). */
const NOT_FOUND_AS_400: Record<string, string> = { changeProcessStep: 'wm3131' }

function resolve(schema: Schema | undefined): Schema | undefined {
  if (!schema?.$ref) return schema
  const name = schema.$ref.split('/').at(-1) as string
  return resolve(document.components.schemas[name])
}

/** A field's value: the candidate of the type its schema declares (a field may be text in one operation, an object in another). */
function valueFor(candidate: unknown, schema: Schema | undefined): unknown {
  const candidates =
    Array.isArray(candidate) && candidate.length === 2 && typeof candidate[0] === 'string' && typeof candidate[1] === 'object'
      ? candidate
      : [candidate]
  const type = resolve(schema)?.type
  const typeOf = (value: unknown) =>
    Array.isArray(value)
      ? 'array'
      : value === null
        ? 'null'
        : typeof value === 'number'
          ? Number.isInteger(value)
            ? 'integer'
            : 'number'
          : typeof value
  return (
    candidates.find((value) => type === undefined || typeOf(value) === type || (type === 'number' && typeOf(value) === 'integer')) ??
    candidates[0]
  )
}

/**
 * The fields a schema declares that A's values can fill, each of its declared type; a value its
 * field's enum does not take is left out (`status: 'cancelled'` names no batch job status), so the
 * request reaches the tenant check instead of failing validation.
 */
function bodyOf(schema: Schema | undefined, values: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(schema?.properties ?? {})
      .filter(([key]) => key in values)
      .map(([key, property]) => [key, valueFor(values[key], property)] as const)
      .filter(([key, value]) => {
        const allowed = resolve(schema?.properties?.[key])?.enum
        return allowed === undefined || allowed.includes(value)
      }),
  )
}

/** Every value of A's that a field of a request may name. */
function tenantAValues(
  resources: TenantAResources,
  tenant: { appId: string; organizationId: string },
  a: { employee: StoredUser; manager: StoredUser },
): Record<string, unknown> {
  return {
    ...tenant,
    processId: 'leave-request',
    processInstanceId: resources.processInstanceId,
    processInstance: resources.processInstanceId,
    processInstances: [{ processInstanceId: resources.processInstanceId, businessKey: resources.businessKey }],
    businessKey: resources.businessKey,
    taskId: resources.taskId,
    taskDefinitionKey: 'request',
    storageHandle: 'any-file',
    threadId: 'main',
    noteId: 'any-note',
    label: 'attachment',
    note: ['a note from another tenant', { id: 'any-note', note: 'a note from another tenant' }],
    actionType: 'cancel',
    dataInstance: { days: 99, reason: 'overwritten by another tenant' },
    input: { days: 1 },
    inputParams: { amount: 100 },
    constantId: 'hr:vatRate',
    stepId: 'cancelled',
    status: 'cancelled',
    targetUserId: a.manager.userId,
    swimlane: 'hr',
    userId: a.employee.userId,
    initiatorUserId: a.employee.userId,
    eventType: 'Finished',
    date1: '2000-01-01T00:00:00.000Z',
    date2: '2100-01-01T00:00:00.000Z',
    filter: { processId: 'leave-request' },
    operation: 'cancel',
    nHours: 48,
    fromVersion: 1,
    toVersion: 2,
    workerId: 'worker-a',
    topics: [{ topic: 'payroll', lockDuration: 60_000 }],
    maxTasks: 10,
    errorMessage: 'failed by another tenant',
    retries: 0,
    newDuration: 60_000,
    output: { overwritten: 'by another tenant' },
    // A message for A's instance (its businessKey, the default correlation key of a receive step).
    messageName: 'leaveDecision',
    correlationKey: resources.businessKey,
    variables: { days: 99 },
  }
}

const PATH_VALUES = (resources: TenantAResources, a: { employee: StoredUser }): Record<string, string> => ({
  processInstanceId: resources.processInstanceId,
  taskId: resources.taskId,
  functionId: 'vatOf',
  collection: 'Leave bookings',
  userId: a.employee.userId,
  appId: TENANT_A.appId,
  actionType: 'cancel',
  externalTaskId: resources.externalTaskId ?? 'unknown',
})

t.test(
  'cross-tenant matrix (jwt mode): every proxied route, called with a token of ' +
    "tenant B on tenant A's resources, is 403/404 and changes nothing of A",
  async (t) => {
    const stack = await startSecureStack(t, { config: jwtAuthConfig(), credentials: bearerIdentity(), externalTask: true })
    const pathValues = PATH_VALUES(stack.resources, stack.a)
    // What a caller of B could learn only from an answer (ids it sent may be echoed in a not-found message).
    const secrets = ['Family visit', '"result"', '"vat"', stack.a.employee.fullName, '"items"']
    const callers = [stack.b.admin, stack.b.system, stack.b.user]
    let requests = 0
    for (const route of proxyRoutes) {
      const operation = document.paths[route.url.replace(/:([A-Za-z]+)/g, '{$1}')]?.[route.method.toLowerCase()]
      t.ok(operation, `${route.operationId} is documented`)
      const content = operation?.requestBody?.content ?? {}
      const schema = resolve(content['application/json']?.schema ?? content['multipart/form-data']?.schema)
      const path = route.url.replace(/:([A-Za-z]+)/g, (_, name: string) => encodeURIComponent(pathValues[name] ?? 'unknown'))
      for (const named of [TENANT_A, TENANT_B]) {
        const values = tenantAValues(stack.resources, named, stack.a)
        for (const caller of callers) {
          let body: unknown
          if (content['multipart/form-data']) {
            const form = new FormData()
            form.append('fields', JSON.stringify({ ...bodyOf(document.components.schemas.FileUploadFields, values), fileName: 'x.pdf' }))
            form.append('fileBody', new Blob([Buffer.from('%PDF-1.4 from tenant B')], { type: 'application/pdf' }), 'x.pdf')
            body = form
          } else if (schema) {
            const { [LEFT_OUT[route.operationId] ?? '']: _leftOut, ...fields } = bodyOf(schema, values)
            body = fields
          }
          const query =
            route.method === 'GET' || route.method === 'DELETE' ? `?appId=${named.appId}&organizationId=${named.organizationId}` : ''
          const before = await snapshotTenantA(stack.store)
          const answer = await stack.send(route.method, `${path}${query}`, { as: caller, body, operationId: route.operationId })
          requests++
          const label =
            `${route.operationId} by ${caller.fullName} naming ${named.appId}: ${answer.status} ` + `${answer.body.error?.code ?? ''}`
          const code = answer.body.error?.code
          const refused =
            answer.status === 403 ||
            answer.status === 404 ||
            (answer.status === 400 && code !== undefined && NOT_FOUND_AS_400[route.operationId] === code)
          const emptyRead = answer.status === 200 && CALLER_SCOPED_READS.has(route.operationId)
          t.ok(refused || emptyRead, label)
          for (const secret of secrets.filter((secret) => !OWN_ANSWER_KEYS[route.operationId]?.includes(secret)))
            t.notOk(answer.text.includes(secret), `${route.operationId}: the answer holds nothing of A (${secret.slice(0, 12)})`)
          t.equal(
            await snapshotTenantA(stack.store),
            before,
            `${route.operationId} by ${caller.fullName}: A's instance, tasks, locks and notifications unchanged`,
          )
        }
      }
    }
    t.equal(requests, proxyRoutes.length * 6, 'every proxied route was called by every caller in both forms')
  },
)

t.test(
  "the console's routes (getConsolePage, getConsoleFile) answer every caller alike, of tenant A, of B or nobody, " +
    'and hold nothing of a tenant',
  async (t) => {
    const stack = await startSecureStack(t, { config: jwtAuthConfig(), credentials: bearerIdentity() })
    const secrets = ['Family visit', stack.a.employee.fullName, stack.a.employee.userId, stack.resources.processInstanceId]
    for (const path of ['/console', '/console/', '/console/console.js', '/console/console.css']) {
      const answers: Array<{ status: number; text: string }> = []
      for (const caller of [stack.a.admin, stack.b.admin, undefined]) {
        const headers = caller ? await stack.credentials(caller.userId) : {}
        const response = await fetch(`${stack.gatewayUrl}${path}`, { headers })
        answers.push({ status: response.status, text: await response.text() })
      }
      t.ok(
        answers.every((answer) => answer.status === answers[0]!.status && answer.text === answers[0]!.text),
        `${path}: the same answer (${answers[0]!.status}) to A, to B and to nobody`,
      )
      for (const secret of secrets) t.notOk(answers[0]!.text.includes(secret), `${path} holds nothing of A (${secret.slice(0, 12)})`)
    }
  },
)
