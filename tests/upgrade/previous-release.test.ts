/**
 * A data directory written by the previous release (tests/upgrade/fixtures/README.md says how it
 * was made) opens with this release: the store is migrated once at start (store/schema) and then
 * everything it held is there and works through the gateway; a second start does not migrate
 * again; a migration interrupted after any of its steps completes on the next start to exactly the
 * state an uninterrupted one leaves.
 */
import { cpSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import t, { type Test } from 'tap'
import { repoRoot } from '../../lib/server/paths.js'
import { Collections, type StoredDataCollection } from '../../store/collections.js'
import { DATABASE_FILE, EmbeddedStore } from '../../store/embedded/store.js'
import { openStore } from '../../store/open.js'
import type { Store } from '../../store/port.js'
import { migrateStore, STORE_SCHEMA_VERSION, storeSchemaVersion } from '../../store/schema/migrate.js'
import { REDUNDANT_INDEXES } from '../../store/schema/redundant-indexes.js'
import { TENANT_PAIR_STEPS } from '../../store/schema/tenant-pair.js'
import { constantDocumentId, scheduleDocumentId } from '../../store/tenant.js'
import { startService, tempDir } from '../../services/testing/harness.js'

const FIXTURES = join(repoRoot, 'tests/upgrade/fixtures')
const TENANT = { organizationId: 'acme', appId: 'hr' }
const MODELS = ['hr-constants', 'hr-lib', 'leave-bookings', 'leave-form', 'leave-request', 'hr-settings', 'hr-nightly']

interface Made {
  employee: string
  manager: string
  admin: string
  finished: { processInstanceId: string; businessKey: string }
  waiting: { processInstanceId: string; businessKey: string }
}
const made = JSON.parse(readFileSync(join(FIXTURES, 'previous-release.json'), 'utf8')) as Made

/** A copy of the fixture, so every test starts from the previous release's bytes. */
function fixtureCopy(t: Test): string {
  const dataDir = tempDir(t, 'previous-release-')
  cpSync(join(FIXTURES, 'previous-release'), dataDir, { recursive: true })
  return dataDir
}

const COLLECTIONS = [
  Collections.models,
  Collections.constants,
  Collections.dataCollections,
  Collections.users,
  Collections.contexts,
  Collections.activities,
  Collections.notifications,
  Collections.schedules,
  Collections.batchJobs,
  Collections.taskLocks,
]

/** How many documents each collection, and each data collection's physical collection, holds. */
async function counts(store: Store): Promise<Record<string, number>> {
  const found: Record<string, number> = {}
  for (const name of COLLECTIONS) found[name] = await store.collection(name).countDocuments()
  for (const entry of await store.collection<StoredDataCollection>(Collections.dataCollections).find({}).toArray())
    found[`data collection ${entry.name}`] = await store.collection(entry.collectionName).countDocuments()
  return found
}

/** Every document of every collection that holds any, as sorted JSON: two stores with equal dumps hold the same. */
async function dump(store: Store): Promise<string> {
  const all: Record<string, string[]> = {}
  for (const name of (await store.listCollections()).sort())
    all[name] = (await store.collection(name).find({}).toArray()).map((document) => JSON.stringify(document)).sort()
  return JSON.stringify(all)
}

/** The fixture as the previous release left it, read without migrating. */
async function previousState(t: Test, dataDir: string): Promise<Record<string, number>> {
  const file = new Database(join(dataDir, DATABASE_FILE), { readonly: true })
  const indexes = file.prepare<[], string>("SELECT name FROM indexes WHERE collection = 'contexts'").pluck().all()
  file.close()
  for (const { name } of REDUNDANT_INDEXES) t.ok(indexes.includes(name), `the fixture has the index ${name}`)
  const store = await EmbeddedStore.open({ dataDir })
  try {
    t.equal(await storeSchemaVersion(store), 1, 'the fixture has no schema version: it is of the previous release')
    t.ok(await store.collection(Collections.constants).findOne({ _id: 'hr:vatRate' }), 'its constants are keyed by the app alone')
    return await counts(store)
  } finally {
    await store.close()
  }
}

t.test('a data directory of the previous release opens migrated: everything is there and works through the gateway', async (t) => {
  const dataDir = fixtureCopy(t)
  const before = await previousState(t, dataDir)
  t.ok(before[Collections.contexts] === 2 && before['data collection Leave bookings'] === 1, 'the fixture holds what it was made with')

  const store = await openStore({ dataDir })
  t.teardown(() => store.close())
  t.equal(await storeSchemaVersion(store), STORE_SCHEMA_VERSION, 'migrated at open')
  t.same(await counts(store), before, 'every collection holds as many documents as before')
  for (const { collection, name } of REDUNDANT_INDEXES)
    t.equal(await store.collection(collection).dropIndex(name), false, `the redundant index ${name} was dropped`)
  t.ok(await store.collection(Collections.constants).findOne({ _id: constantDocumentId(TENANT, 'vatRate') }), 'constants re-keyed')
  t.match(await store.collection(Collections.schedules).findOne({ _id: scheduleDocumentId(TENANT, 'hr-nightly', 'vat-check') }), {
    ...TENANT,
    cron: '0 6 * * *',
    nextTickAt: Date,
  })

  const engine = await startService(t, 'engine', { store })
  const gateway = await startService(t, 'gateway', { store, config: { engineUrl: engine.url } })
  const send = async (user: string | null, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${gateway.url}${path}`, {
      method,
      headers: { ...(user ? { user } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    const text = await response.text()
    return {
      status: response.status,
      text,
      data: (text.startsWith('{') ? (JSON.parse(text) as { data?: unknown }).data : undefined) as never,
    }
  }

  for (const model of MODELS) t.equal((await send(made.manager, 'GET', `/model/getModel/${model}`)).status, 200, `model ${model} is served`)
  const constant = await send(made.employee, 'POST', '/getConstantValue', { ...TENANT, constantId: 'hr:vatRate', processInstanceId: 'any' })
  t.same(constant.data, { result: '0.2' }, 'the constant answers as before')
  const users = await send(made.admin, 'GET', '/user/listWorkflowUsers')
  t.same(
    (users.data as Array<{ fullName: string }>).map((user) => user.fullName).sort(),
    ['Ada Admin', 'Eve Employee', 'Max Manager'],
    'the users are there',
  )
  const taken = await send(null, 'POST', '/user/createUser', {
    ...TENANT,
    fullName: 'EVE EMPLOYEE',
    unit: { id: 'u', name: 'U' },
    roles: ['user'],
  })
  t.match(JSON.parse(taken.text), { error: { code: 'fm3004' } }, 'full names stay unique within the tenant')
  const settings = await send(null, 'GET', '/settings/app', undefined, { referer: 'https://portal.example/?appId=hr' })
  t.match(settings.text, 'HR portal', 'the settings are served')
  const finished = await send(made.manager, 'GET', `/process/${made.finished.processInstanceId}`)
  t.match(finished.data, { processStatus: 'completed' }, 'the finished instance is there')

  // The paged queries read fields the previous release did not store: the migration derived them.
  const inbox = await send(made.manager, 'POST', '/query/myTasks', TENANT)
  t.match(
    inbox.data,
    { items: [{ processInstanceId: made.waiting.processInstanceId, stepId: 'approve', lock: null }], nextCursor: null },
    "the manager's inbox holds the waiting instance's approval",
  )
  const listed = await send(made.admin, 'POST', '/query/instances', TENANT)
  t.same(
    (listed.data as { items: Array<{ processInstanceId: string; openTaskCount: number }> }).items
      .map((item) => [item.processInstanceId, item.openTaskCount])
      .sort(),
    [
      [made.finished.processInstanceId, 0],
      [made.waiting.processInstanceId, 1],
    ].sort(),
    'the admin lists both instances, with their open tasks',
  )

  // The half-done leave request is completed now by its manager.
  const ids = { ...TENANT, processId: 'leave-request', ...made.waiting }
  const opened = await send(made.manager, 'POST', '/context', { ...ids, skipToForm: true })
  t.equal(opened.status, 200, `the waiting instance opens: ${opened.text}`)
  const session = opened.data as { formContext: { task: { taskId: string; name: string } }; context: { dataInstance: unknown } }
  t.equal(session.formContext.task.name, 'Approve leave')
  const approved = await send(made.manager, 'POST', '/action/complete', {
    ...ids,
    taskId: session.formContext.task.taskId,
    actionType: 'complete',
    dataInstance: session.context.dataInstance,
  })
  t.equal(approved.status, 200, `approved: ${approved.text}`)
  t.match((await send(made.manager, 'GET', `/process/${made.waiting.processInstanceId}`)).data, { processStatus: 'completed' })
  const bookings = await send(made.employee, 'POST', `/external/data/search/${encodeURIComponent('Leave bookings')}`, {
    ...TENANT,
    filter: {},
  })
  t.same(
    (bookings.data as { items: Array<{ days: number }> }).items.map((booking) => booking.days).sort(),
    [3, 5],
    "the old booking is found, and the new one joined it in the tenant's collection",
  )
})

t.test('a migration whose service died is taken over once its lease has run out', async (t) => {
  const store = await EmbeddedStore.open({ dataDir: fixtureCopy(t) })
  t.teardown(() => store.close())
  const now = new Date()
  await store
    .collection(Collections.meta)
    .insertOne({ _id: 'storeSchema', migrationOwner: 'a service that died', migrationLeaseUntil: new Date(now.getTime() + 1_000) })
  t.equal(await migrateStore(store, { now: () => new Date(now.getTime() + 2_000) }), 'migrated')
  t.equal(await storeSchemaVersion(store), STORE_SCHEMA_VERSION)
})

t.test('a second start does not migrate again', async (t) => {
  const dataDir = fixtureCopy(t)
  const first = await openStore({ dataDir })
  const migrated = await dump(first)
  await first.close()
  const second = await EmbeddedStore.open({ dataDir })
  t.teardown(() => second.close())
  t.equal(await migrateStore(second), 'current')
  t.equal(await dump(second), migrated, 'nothing changed')
})

t.test('a migration interrupted after any step completes on the next start, with nothing lost or doubled', async (t) => {
  const reference = await EmbeddedStore.open({ dataDir: fixtureCopy(t) })
  t.equal(await migrateStore(reference), 'migrated')
  const expected = await dump(reference)
  const expectedCounts = await counts(reference)
  await reference.close()

  for (const step of TENANT_PAIR_STEPS) {
    const dataDir = fixtureCopy(t)
    const interrupted = await EmbeddedStore.open({ dataDir })
    const failure = new Error(`stopped after ${step.name}`)
    const stopAfter = (name: string) => {
      if (name === step.name) throw failure
    }
    await t.rejects(migrateStore(interrupted, { afterStep: stopAfter }), failure, `interrupted after "${step.name}"`)
    t.equal(await storeSchemaVersion(interrupted), 1, 'the version is not written')
    await interrupted.close()

    const restarted = await EmbeddedStore.open({ dataDir })
    t.equal(await migrateStore(restarted), 'migrated', 'the next start migrates')
    t.same(await counts(restarted), expectedCounts, `after "${step.name}": every collection holds as many documents`)
    t.equal(await dump(restarted), expected, 'the same state as an uninterrupted migration')
    await restarted.close()
  }
})
