/**
 * One unit of work per request: a flow function's `data` inserts, updates and deletes are stored
 * with the request's instance commit or not at all. Driven through the gateway, as a client would,
 * with a process model and a data collection deployed by `insertModel`.
 */
import { Readable } from 'node:stream'
import t from 'tap'
import { Agent, request } from 'undici'
import type { Session } from '../../openapi/generated/schemas.js'
import type { Envelope } from '../../services/testing/gateway.js'
import { startService } from '../../services/testing/harness.js'
import { dataCollectionName } from '../../services/testing/models.js'
import { createHrUsers, formTask, HR, type HrUsers, type WorkflowClient, workflowClient } from '../../services/testing/workflow.js'
import type { Collection, Document, Store } from '../../store/port.js'
import { openTestStore } from '../../services/testing/harness.js'

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

const LEDGER = 'UoW ledger'

/** Every function writes to the ledger: one insert, one update, one delete, all keyed by the instance. */
const writes = (kind: string) => [
  { set: { 'vars.attempt': '$uuid()' } },
  { data: 'insert', collection: LEDGER, doc: `{ 'instance': process.processInstanceId, 'kind': '${kind}', 'attempt': vars.attempt }` },
  {
    data: 'update',
    collection: LEDGER,
    filter: "{ '_id': 'seed-' & process.processInstanceId }",
    set: `{ 'touchedBy': vars.attempt, 'kind': '${kind}' }`,
  },
  { data: 'delete', collection: LEDGER, filter: "{ '_id': 'doomed-' & process.processInstanceId }" },
]

const PROBE_MODEL = {
  modelID: 'uow-probe',
  type: 'process',
  name: 'Unit of work probe',
  modelBody: {
    processId: 'uow-probe',
    name: 'Unit of work probe',
    swimlanes: { employee: { name: 'Employees' } },
    start: 'work',
    steps: {
      work: {
        type: 'userTask',
        name: 'Work',
        swimlane: 'employee',
        assignTo: 'initiator',
        actions: [
          { actionType: 'complete', next: 'book' },
          { actionType: 'function', customType: 'failing', function: 'writeFindThenFail' },
        ],
      },
      book: { type: 'function', function: 'writeAll', next: 'route' },
      route: {
        type: 'switch',
        cases: [
          { when: "data.mode = 'rollback'", next: 'explode' },
          { when: "data.mode = 'failStep'", next: 'softFail' },
        ],
        default: 'done',
      },
      explode: { type: 'function', function: 'technicalFailure', next: 'done' },
      softFail: { type: 'function', function: 'writeFindThenFail', next: 'done', onError: 'fail' },
      done: { type: 'end' },
    },
    functions: {
      writeAll: { steps: writes('complete') },
      writeFindThenFail: {
        steps: [
          ...writes('failing'),
          {
            data: 'find',
            collection: LEDGER,
            filter: "{ 'instance': process.processInstanceId, 'attempt': vars.attempt }",
            as: 'vars.found',
          },
          { fail: "'refused after seeing ' & $string($count(vars.found)) & ' own write'", code: 'REFUSED' },
        ],
      },
      // A data collection that does not exist: a technical failure, after writeAll's writes.
      technicalFailure: { steps: [{ data: 'find', collection: 'No such collection', filter: '{}' }] },
    },
  },
}

const LEDGER_MODEL = { modelID: 'uow-ledger', type: 'dataCollection', name: 'UoW ledger', modelBody: { name: LEDGER } }

interface Probe {
  store: Store
  users: HrUsers
  gateway: WorkflowClient
  ledger: () => Collection<Document>
}

async function startProbe(t: Tap): Promise<Probe> {
  const store = await openTestStore(t)
  const users = await createHrUsers(store)
  const engine = await startService(t, 'engine', { store })
  const gateway = workflowClient(t, (await startService(t, 'gateway', { store, config: { engineUrl: engine.url } })).url, 'gateway')
  for (const model of [LEDGER_MODEL, PROBE_MODEL]) {
    const inserted = await gateway.call('insertModel', 'POST', '/model/insertModel', { body: { model, live: true, ...HR } })
    t.equal(inserted.status, 200, `${model.modelID} deploys through the gateway`)
  }
  return { store, users, gateway, ledger: () => store.collection<Document>(dataCollectionName(HR, LEDGER_MODEL.modelID)) }
}

/** Starts an instance and seeds the documents its functions update and delete. */
async function startInstance(probe: Probe): Promise<Session> {
  const started = await probe.gateway.call<Envelope<Session>>('openContext', 'POST', '/context', {
    user: probe.users.employee.userId,
    body: { ...HR, processId: 'uow-probe', input: {} },
  })
  if (started.status !== 200) throw new Error(`start failed: ${JSON.stringify(started.body)}`)
  const session = started.body.data
  const id = session.context.processInstance.processInstanceId
  await probe.ledger().insertMany([
    { _id: `seed-${id}`, touchedBy: null },
    { _id: `doomed-${id}`, doomed: true },
  ])
  return session
}

function completeBody(session: Session, mode: string) {
  const instance = session.context.processInstance
  return {
    ...HR,
    processId: instance.processId,
    processInstanceId: instance.processInstanceId,
    businessKey: instance.businessKey,
    taskId: formTask(session).taskId,
    actionType: 'complete',
    dataInstance: { mode },
  }
}

/** The ledger as the instance's requests left it: what they inserted, and the seeded documents. */
async function ledgerOf(
  probe: Probe,
  processInstanceId: string,
): Promise<{ inserted: Document[]; seed: Document | null; doomed: Document | null }> {
  const ledger = probe.ledger()
  return {
    inserted: await ledger.find({ instance: processInstanceId }).toArray(),
    seed: await ledger.findOne({ _id: `seed-${processInstanceId}` }),
    doomed: await ledger.findOne({ _id: `doomed-${processInstanceId}` }),
  }
}

async function assertUntouched(t: Tap, probe: Probe, processInstanceId: string): Promise<void> {
  const { inserted, seed, doomed } = await ledgerOf(probe, processInstanceId)
  t.same(inserted, [], 'no inserted document is left')
  t.same(seed, { _id: `seed-${processInstanceId}`, touchedBy: null }, 'the updated document is as it was')
  t.ok(doomed, 'the deleted document is still there')
}

t.test('a step failing after data writes (onError rollback) leaves none of them behind', async (t) => {
  const probe = await startProbe(t)
  const session = await startInstance(probe)
  const id = session.context.processInstance.processInstanceId
  const answer = await probe.gateway.call<Envelope>('completeAction', 'POST', '/action/complete', {
    user: probe.users.employee.userId,
    body: completeBody(session, 'rollback'),
  })
  t.equal(answer.status, 500, 'the rollback answers 500')
  await assertUntouched(t, probe, id)
  const stored = await probe.store.collection('contexts').findOne({ _id: id })
  t.match(stored, { version: 1, processInstance: { processStatus: 'running' } }, 'the instance is as it was')
})

t.test('a business fail after data writes leaves none of them behind; the run saw its own insert', async (t) => {
  const probe = await startProbe(t)
  const session = await startInstance(probe)
  const id = session.context.processInstance.processInstanceId
  const body = { ...completeBody(session, 'none'), actionType: 'function', customType: 'failing' }
  const answer = await probe.gateway.call<Envelope>('runActionFunction', 'POST', '/action/function', {
    user: probe.users.employee.userId,
    body,
  })
  t.ok(answer.status >= 400 && answer.status < 500, `the business failure answers 4xx (${answer.status})`)
  t.match(answer.body.error?.message, /refused after seeing 1 own write/, 'a find in the run saw the insert made before it')
  await assertUntouched(t, probe, id)
})

t.test(
  'a function step failing with onError "fail" loses its own data writes; the earlier step\'s are stored with the instance',
  async (t) => {
    const probe = await startProbe(t)
    const session = await startInstance(probe)
    const id = session.context.processInstance.processInstanceId
    const answer = await probe.gateway.call<Envelope<Session>>('completeAction', 'POST', '/action/complete', {
      user: probe.users.employee.userId,
      body: completeBody(session, 'failStep'),
    })
    t.equal(answer.status, 200, 'the request commits with the thread failed')
    const { inserted, seed, doomed } = await ledgerOf(probe, id)
    t.match(inserted, [{ kind: 'complete' }], 'only the successful step inserted')
    t.equal(inserted.length, 1)
    t.match(seed, { kind: 'complete', touchedBy: inserted[0]?.attempt }, 'the update of the failed step is gone, the successful one stays')
    t.equal(doomed, null, 'the delete of the successful step is stored')
    t.match(await probe.store.collection('contexts').findOne({ _id: id }), { processInstance: { processStatus: 'failed' } })
  },
)

/**
 * `count` concurrent completions of one task through the gateway: their statuses, once all answered.
 * Each request has its own connection and sends its headers at once but holds its body back until
 * every connection is open, so all of them reach the services together and race for real.
 */
async function concurrentCompletions(probe: Probe, session: Session, count: number): Promise<number[]> {
  const body = Buffer.from(JSON.stringify(completeBody(session, 'none')))
  const headers = { 'content-type': 'application/json', 'content-length': String(body.length), user: probe.users.employee.userId }
  // More connections at once than the listen backlog takes in a burst: the connects that wait for
  // the kernel's SYN retry get time for it.
  const dispatcher = new Agent({ connect: { timeout: 120_000 }, headersTimeout: 120_000, bodyTimeout: 120_000 })
  let connected = 0
  let release: () => void = () => undefined
  const gate = new Promise<void>((resolve) => (release = resolve))
  dispatcher.on('connect', () => {
    if (++connected === count) release()
  })
  // Should a connection never open, the requests still go (and the outcome is checked all the same).
  setTimeout(() => release(), 60_000).unref()
  async function* heldBack(): AsyncGenerator<Buffer> {
    await gate
    yield body
  }
  try {
    return await Promise.all(
      Array.from({ length: count }, async () => {
        // No pipelining: a request still sending its body holds its connection, so each gets its own.
        const response = await request(`${probe.gateway.url}/action/complete`, {
          method: 'POST',
          headers,
          body: Readable.from(heldBack()),
          dispatcher,
        })
        const envelope = (await response.body.json()) as Envelope
        if (response.statusCode !== 200 && response.statusCode !== 409)
          throw new Error(`unexpected ${response.statusCode}: ${JSON.stringify(envelope)}`)
        return response.statusCode
      }),
    )
  } finally {
    await dispatcher.close()
  }
}

async function assertOneWinner(t: Tap, probe: Probe, session: Session, statuses: number[]): Promise<void> {
  const id = session.context.processInstance.processInstanceId
  t.equal(statuses.filter((status) => status === 200).length, 1, 'exactly one completion succeeds')
  t.equal(statuses.filter((status) => status === 409).length, statuses.length - 1, 'every other one answers 409')
  const { inserted, seed, doomed } = await ledgerOf(probe, id)
  t.equal(inserted.length, 1, "only the winner's insert exists")
  t.match(seed, { touchedBy: inserted[0]?.attempt }, "the update is the winner's")
  t.equal(doomed, null)
  t.match(await probe.store.collection('contexts').findOne({ _id: id }), { version: 2, processInstance: { processStatus: 'completed' } })
}

t.test("20 concurrent completions: one winner, and only the winner's data writes exist", async (t) => {
  const probe = await startProbe(t)
  for (let round = 0; round < 3; round++) {
    const session = await startInstance(probe)
    await assertOneWinner(t, probe, session, await concurrentCompletions(probe, session, 20))
  }
})

t.test('1,000 concurrent completions of one task through the gateway: exactly one success, the others 409', async (t) => {
  const probe = await startProbe(t)
  const session = await startInstance(probe)
  await assertOneWinner(t, probe, session, await concurrentCompletions(probe, session, 1000))
})
