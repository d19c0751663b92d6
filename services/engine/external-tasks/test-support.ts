/**
 * Test support for external tasks: one store, one or more engines on the test's clock, a gateway
 * in front of each, the tenant's users (a system user as the worker), a second organization with
 * the same appId, and a `payroll` process whose export step is an external task: every request
 * goes through a gateway and its answer is checked against the gateway's document.
 */
import type { Test } from 'tap'
import type { LockedExternalTasks, ProcessStartResult } from '../../../openapi/generated/schemas.js'
import { Collections, type StoredContext, type StoredExternalTask, type StoredModel, type StoredUser } from '../../../store/collections.js'
import type { Store } from '../../../store/port.js'
import type { Config } from '../../../lib/config/config.js'
import { type GatewayAnswer, sendToGateway } from '../../testing/gateway.js'
import { openTestStore, type RunningService, startService } from '../../testing/harness.js'
import { type TestClock, testClock } from '../../testing/clock.js'
import { storedInstance } from '../../testing/instance-store.js'
import { createTestUser } from '../../testing/users.js'
import { recordTenantDeploy } from '../../../plugins/cache/invalidations.js'
import type { ExternalTaskStep, ProcessModelBody } from '../../../runtime/types.js'

export const TENANT = { appId: 'hr', organizationId: 'acme' } as const
/** Same appId, another organization: must never see or touch the tenant's tasks. */
export const OTHER_ORG = { appId: 'hr', organizationId: 'umbrella' } as const

/** approve (a user task) → export (the external task) → done. */
export function payrollModel(exportStep: Partial<ExternalTaskStep> = {}): ProcessModelBody {
  return {
    processId: 'payroll',
    swimlanes: { manager: { name: 'Managers' } },
    start: 'route',
    steps: {
      route: { type: 'switch', cases: [{ when: 'data.approval = true', next: 'approve' }], default: 'export' },
      approve: { type: 'userTask', name: 'Approve', swimlane: 'manager', actions: [{ actionType: 'complete', next: 'export' }] },
      export: {
        type: 'externalTask',
        topic: 'payroll',
        input: "{ 'days': data.days, 'employee': process.initiator }",
        as: 'data.payroll',
        retries: 2,
        next: 'done',
        ...exportStep,
      },
      done: { type: 'end' },
    },
  }
}

export async function deployProcess(
  store: Store,
  tenant: { appId: string; organizationId: string },
  body: ProcessModelBody,
): Promise<void> {
  const models = store.collection<StoredModel>(Collections.models)
  const latest = await models.findOne({ ...tenant, modelID: body.processId, live: true }, { sort: { version: -1 } })
  await models.insertOne({
    modelID: body.processId ?? 'payroll',
    type: 'process',
    ...tenant,
    version: (latest?.version ?? 0) + 1,
    updateDate: new Date().toISOString(),
    modelBody: body,
    live: true,
    processId: body.processId ?? 'payroll',
  })
  await recordTenantDeploy(store, tenant)
}

export interface WorkerStack {
  store: Store
  clock: TestClock
  users: { employee: StoredUser; manager: StoredUser; worker: StoredUser; otherWorker: StoredUser }
  engines: RunningService[]
  gateways: RunningService[]
  /** Sends through gateway `via` (default 0); the answer is checked against `operationId`'s documented schemas. */
  send<Data = unknown>(
    operationId: string,
    path: string,
    options: { as: StoredUser; body?: unknown; via?: number; method?: string },
  ): Promise<GatewayAnswer<Data>>
  /** Starts a payroll instance as the employee: answers its id. */
  start(input?: Record<string, unknown>): Promise<string>
  fetch(options?: {
    workerId?: string
    as?: StoredUser
    via?: number
    lockDuration?: number
    maxTasks?: number
    wait?: number
  }): Promise<LockedExternalTasks>
  tasks(processInstanceId?: string): Promise<StoredExternalTask[]>
  instance(processInstanceId: string): Promise<StoredContext>
}

export async function startWorkerStack(
  t: Test,
  options: { engines?: number; body?: ProcessModelBody; config?: Partial<Config> } = {},
): Promise<WorkerStack> {
  const store = await openTestStore(t)
  const clock = testClock('2026-03-02T08:30:00.000Z')
  await deployProcess(store, TENANT, options.body ?? payrollModel())
  await deployProcess(store, OTHER_ORG, options.body ?? payrollModel())
  const users = {
    employee: await createTestUser(store, { ...TENANT, fullName: 'Emma Employee' }),
    manager: await createTestUser(store, { ...TENANT, fullName: 'Max Manager', swimlanes: ['manager'] }),
    worker: await createTestUser(store, { ...TENANT, fullName: 'Pay Roll Worker', isSystemUser: true }),
    otherWorker: await createTestUser(store, { ...OTHER_ORG, fullName: 'Umbrella Worker', isSystemUser: true }),
  }
  const engines: RunningService[] = []
  const gateways: RunningService[] = []
  for (let index = 0; index < (options.engines ?? 1); index++) {
    const config = { externalTaskPollMs: 20, ...options.config }
    const engine = await startService(t, 'engine', { store, clock: clock.now, config })
    engines.push(engine)
    gateways.push(await startService(t, 'gateway', { store, config: { engineUrl: engine.url } }))
  }

  const send: WorkerStack['send'] = (operationId, path, { as, body, via = 0, method = 'POST' }) =>
    sendToGateway(t, gateways[via]!.url, { operationId, method, path, headers: { user: as.userId }, body })

  return {
    store,
    clock,
    users,
    engines,
    gateways,
    send,
    async start(input = { days: 3 }) {
      const answer = await send<ProcessStartResult>('startProcess', '/process/start', {
        as: users.employee,
        body: { ...TENANT, processId: 'payroll', input },
      })
      if (answer.status !== 200) throw new Error(`payroll did not start: ${JSON.stringify(answer.body)}`)
      return answer.body.data.context.processInstance.processInstanceId
    },
    async fetch({ workerId = 'worker-1', as = users.worker, via = 0, lockDuration = 60_000, maxTasks = 10, wait } = {}) {
      const answer = await send<LockedExternalTasks>('fetchAndLockExternalTasks', '/external/worker/fetchAndLock', {
        as,
        via,
        body: {
          ...TENANT,
          workerId,
          topics: [{ topic: 'payroll', lockDuration }],
          maxTasks,
          ...(wait === undefined ? {} : { asyncResponseTimeout: wait }),
        },
      })
      if (answer.status !== 200) throw new Error(`fetchAndLock failed: ${JSON.stringify(answer.body)}`)
      return answer.body.data
    },
    tasks: (processInstanceId) =>
      store
        .collection<StoredExternalTask>(Collections.externalTasks)
        .find(processInstanceId === undefined ? {} : { processInstanceId })
        .toArray(),
    instance: (processInstanceId) => storedInstance(store, processInstanceId),
  }
}
