import { gunzipSync } from 'node:zlib'
import t from 'tap'
import type { Store } from '../../../store/port.js'
import { Collections, type StoredCacheInvalidation } from '../../../store/collections.js'
import { tenantKey } from '../../../store/tenant.js'
import { ContractChecker } from '../../testing/contract.js'
import { type Envelope, startGateway } from '../../testing/gateway.js'
import { insertModelRequest } from '../../testing/models.js'
import { createTestUser } from '../../testing/users.js'
import { dataCollectionName, modelCollections } from './repository.js'

const HR = { appId: 'hr', organizationId: 'acme' }
const contract = new ContractChecker('gateway')
/** getModel answers a user of the model's app (or the admin token): the tests read as this one. */
const READER = { user: 'hr-reader' }

async function addReader(store: Parameters<typeof createTestUser>[0]): Promise<void> {
  await createTestUser(store, { ...HR, userId: READER.user, fullName: 'Hr Reader' })
}

async function modelVersions(store: Store, modelID: string) {
  const { models } = modelCollections(store)
  return models.find({ modelID }, { sort: { live: -1, version: 1 } }).toArray()
}

t.test('a live insert adds version n+1 and keeps every earlier live version', async (t) => {
  const { gateway, client } = await startGateway(t)
  const first = await client.call<Envelope<string>>('insertModel', 'POST', '/model/insertModel', {
    body: insertModelRequest('leave-form', HR),
  })
  t.same(first.body, { status: 'success', data: 'inserted' })
  const second = await client.call<Envelope<string>>('insertModel', 'POST', '/model/insertModel', {
    body: insertModelRequest('leave-form', { ...HR, edit: (body) => void (body.title = 'v2') }),
  })
  t.same(second.body, { status: 'success', data: 'updated' })
  const versions = await modelVersions(gateway.app.store, 'leave-form')
  t.same(
    versions.map((model) => [model.live, model.version]),
    [
      [true, 1],
      [true, 2],
    ],
  )
  t.notOk('title' in (versions[0]!.modelBody as object), 'version 1 is kept as it was')
  t.equal((versions[1]!.modelBody as { title: string }).title, 'v2')
  t.match(versions[1], { appId: 'hr', organizationId: 'acme', type: 'form', name: 'Leave form', updateDate: /^\d{4}-\d\d-\d\dT/ })
})

t.test('concurrent live inserts of one model each get their own version', async (t) => {
  const { gateway, client } = await startGateway(t)
  const answers = await Promise.all(
    Array.from({ length: 4 }, (_, n) =>
      client.call('insertModel', 'POST', '/model/insertModel', {
        body: insertModelRequest('leave-form', { ...HR, edit: (body) => void (body.n = n) }),
      }),
    ),
  )
  t.same(
    answers.map((answer) => answer.status),
    [200, 200, 200, 200],
  )
  t.same(
    (await modelVersions(gateway.app.store, 'leave-form')).map((model) => model.version),
    [1, 2, 3, 4],
  )
})

t.test('a draft (live: false) is one document per model, never served while a live version exists', async (t) => {
  const { gateway, client } = await startGateway(t)
  await addReader(gateway.app.store)
  await client.call('insertModel', 'POST', '/model/insertModel', {
    body: insertModelRequest('leave-form', { ...HR, live: false, edit: (body) => void (body.draft = 1) }),
  })
  const draftOnly = await fetch(`${gateway.url}/model/getModel/leave-form?appId=hr`, { headers: READER })
  t.equal(((await draftOnly.json()) as { draft: number }).draft, 1, 'with no live version the draft is served')
  await client.call('insertModel', 'POST', '/model/insertModel', { body: insertModelRequest('leave-form', HR) })
  await client.call('insertModel', 'POST', '/model/insertModel', {
    body: insertModelRequest('leave-form', { ...HR, live: false, edit: (body) => void (body.draft = 2) }),
  })
  const versions = await modelVersions(gateway.app.store, 'leave-form')
  t.same(
    versions.map((model) => [model.live, model.version]),
    [
      [true, 1],
      [false, 0],
    ],
    'one live version and one draft',
  )
  t.equal((versions[1]!.modelBody as { draft: number }).draft, 2, 'the draft was replaced')
  const served = (await (await fetch(`${gateway.url}/model/getModel/leave-form?appId=hr`, { headers: READER })).json()) as Record<
    string,
    unknown
  >
  t.notOk('draft' in served, 'the live version is served, not the draft')
})

t.test('an invalid model is 400 fm3010 naming the path of its first fault, and nothing is written', async (t) => {
  const { gateway, client } = await startGateway(t)
  const cases: Array<[string, object, string]> = [
    [
      'a step reference',
      insertModelRequest('leave-request', {
        ...HR,
        edit: (body) => void ((body.steps as Record<string, { next?: string }>).book!.next = 'archiv'),
      }),
      'body.model.modelBody.steps.book.next',
    ],
    [
      'an expression',
      insertModelRequest('hr-lib', {
        ...HR,
        edit: (body) =>
          void ((body.functions as { vatOf: { steps: Array<{ set: Record<string, string> }> } }).vatOf.steps[0]!.set['output.vat'] = '1 +'),
      }),
      'body.model.modelBody.functions.vatOf.steps[0].set["output.vat"]',
    ],
    [
      'a cron',
      insertModelRequest('hr-nightly', {
        ...HR,
        edit: (body) => void ((body.schedules as Array<{ cron: string }>)[0]!.cron = '0 25 * * *'),
      }),
      'body.model.modelBody.schedules[0].cron',
    ],
    ['a function only another app defines', insertModelRequest('purchase', HR), 'body.model.modelBody.steps.order.function'],
  ]
  for (const [name, body, field] of cases) {
    const answer = await client.call<Envelope<null> & { error: { parameters?: Record<string, string> } }>(
      'insertModel',
      'POST',
      '/model/insertModel',
      { body },
    )
    t.equal(answer.status, 400, name)
    t.equal(answer.body.error.code, 'fm3010', name)
    t.match(answer.body.error.message, `Invalid model at ${field.replace('body.model.', '')}`, name)
  }
  const badModelId = await client.call<Envelope<null>>('insertModel', 'POST', '/model/insertModel', {
    body: { ...insertModelRequest('leave-form', HR), model: { ...insertModelRequest('leave-form', HR).model, modelID: 'no spaces' } },
  })
  t.equal(badModelId.status, 400, 'the modelID pattern is checked by the schema')
  t.equal(await modelCollections(gateway.app.store).models.countDocuments({}), 0)
  t.equal(await modelCollections(gateway.app.store).batchJobs.countDocuments({}), 0)
})

t.test("a process may call the functions of its app's live functions model", async (t) => {
  const { client } = await startGateway(t)
  t.equal(
    (await client.call('insertModel', 'POST', '/model/insertModel', { body: insertModelRequest('purchase', HR) })).status,
    400,
    'not before the library exists',
  )
  await client.call('insertModel', 'POST', '/model/insertModel', { body: insertModelRequest('hr-lib', HR) })
  t.equal((await client.call('insertModel', 'POST', '/model/insertModel', { body: insertModelRequest('purchase', HR) })).status, 200)
  t.equal(
    (await client.call('insertModel', 'POST', '/model/insertModel', { body: insertModelRequest('purchase', { ...HR, appId: 'other' }) }))
      .status,
    400,
    "another app's library does not count",
  )
})

t.test('a constants model writes its constants as <tenantKey>:<name>; a new version drops the names it no longer has', async (t) => {
  const { gateway, client } = await startGateway(t)
  await client.call('insertModel', 'POST', '/model/insertModel', { body: insertModelRequest('hr-constants', HR) })
  const { constants } = modelCollections(gateway.app.store)
  t.same(await constants.find({}, { sort: { _id: 1 } }).toArray(), [
    { _id: 'acme/hr:payrollOnline', ...HR, name: 'payrollOnline', value: 'yes', modelID: 'hr-constants' },
    { _id: 'acme/hr:vatRate', ...HR, name: 'vatRate', value: '0.2', modelID: 'hr-constants' },
  ])
  await client.call('insertModel', 'POST', '/model/insertModel', {
    body: insertModelRequest('hr-constants', {
      ...HR,
      edit: (body) => {
        delete body.payrollOnline
        body.vatRate = '0.25'
      },
    }),
  })
  t.same(await constants.find({}).toArray(), [{ _id: 'acme/hr:vatRate', ...HR, name: 'vatRate', value: '0.25', modelID: 'hr-constants' }])
  await client.call('insertModel', 'POST', '/model/insertModel', {
    body: insertModelRequest('hr-constants', { ...HR, live: false, edit: (body) => void (body.vatRate = '9') }),
  })
  t.equal((await constants.findOne({ _id: 'acme/hr:vatRate' }))?.value, '0.25', 'a draft changes no constant')
})

t.test('a jobScheduler model creates a waiting deploy job per live version', async (t) => {
  const { gateway, client } = await startGateway(t)
  const before = Date.now()
  await client.call('insertModel', 'POST', '/model/insertModel', { body: insertModelRequest('hr-nightly', HR) })
  await client.call('insertModel', 'POST', '/model/insertModel', { body: insertModelRequest('hr-nightly', { ...HR, live: false }) })
  const jobs = await modelCollections(gateway.app.store).batchJobs.find({}).toArray()
  t.equal(jobs.length, 1, 'a draft creates no job')
  t.match(jobs[0], {
    kind: 'deploy',
    status: 'waiting',
    tryCount: 0,
    appId: 'hr',
    organizationId: 'acme',
    payload: { modelID: 'hr-nightly', version: 1 },
  })
  t.ok(new Date(jobs[0]!.dueAt).getTime() >= before - 1 && new Date(jobs[0]!.dueAt).getTime() <= Date.now(), 'due now')
})

t.test('a dataCollection model registers its collection and builds its indexes', async (t) => {
  const { gateway, client } = await startGateway(t)
  await client.call('insertModel', 'POST', '/model/insertModel', { body: insertModelRequest('leave-bookings', HR) })
  const { dataCollections } = modelCollections(gateway.app.store)
  const entries = await dataCollections.find({}, { projection: { _id: 0 } }).toArray()
  t.same(entries, [
    {
      organizationId: 'acme',
      appId: 'hr',
      name: 'Leave bookings',
      modelID: 'leave-bookings',
      collectionName: dataCollectionName(HR, 'leave-bookings'),
    },
  ])
  const bookings = gateway.app.store.collection(dataCollectionName(HR, 'leave-bookings'))
  await bookings.insertOne({ businessKey: 'LR-1' })
  await t.rejects(bookings.insertOne({ businessKey: 'LR-1' }), { code: 11000 }, 'the unique index exists')
  const taken = await client.call<Envelope<null>>('insertModel', 'POST', '/model/insertModel', {
    body: {
      ...insertModelRequest('leave-bookings', HR),
      model: { ...insertModelRequest('leave-bookings', HR).model, modelID: 'other-bookings' },
    },
  })
  t.equal(taken.status, 400, 'another model cannot take the name')
  t.match(taken.body.error?.message, /modelBody\.name/)
})

t.test(
  'a live insert that fails after its version was stored is undone, and records an invalidation of the tenant all the same',
  async (t) => {
    const { gateway, client } = await startGateway(t)
    const store = gateway.app.store
    const invalidations = () => store.collection<StoredCacheInvalidation>(Collections.cacheInvalidations).find({}).toArray()
    const repository = gateway.app.modelRepository
    const register = repository.putDataCollection
    repository.putDataCollection = () => Promise.reject(new Error('the registry cannot be written'))
    t.teardown(() => {
      repository.putDataCollection = register
    })
    const before = (await invalidations()).length
    const failed = await client.call<Envelope<null>>('insertModel', 'POST', '/model/insertModel', {
      body: insertModelRequest('leave-bookings', HR),
    })
    t.equal(failed.status, 500)
    t.same(await modelVersions(store, 'leave-bookings'), [], 'the stored version was removed again')
    // An engine may have read the version while it existed: the record makes every engine drop what it kept.
    const recorded = (await invalidations()).slice(before)
    t.match(recorded, [{ target: 'all', cacheType: 'app', id: tenantKey(HR) }])
  },
)

t.test('getModel answers the raw body with its documented caching headers and 304 on a matching if-none-match', async (t) => {
  const { gateway, client } = await startGateway(t)
  await addReader(gateway.app.store)
  await client.call('insertModel', 'POST', '/model/insertModel', { body: insertModelRequest('leave-form', HR) })
  const stored = (await modelVersions(gateway.app.store, 'leave-form'))[0]!
  const answer = await fetch(`${gateway.url}/model/getModel/leave-form?organizationId=acme&appId=hr`, { headers: READER })
  const text = await answer.text()
  t.equal(answer.status, 200)
  t.same(JSON.parse(text), stored.modelBody, 'the model body, not an envelope')
  t.match(answer.headers.get('content-type'), /^application\/json/)
  t.equal(answer.headers.get('cache-control'), 'public, max-age=28800')
  t.match(answer.headers.get('vary'), /Accept-Encoding/)
  const etag = `"leave-form-1-${stored.updateDate}-${Buffer.byteLength(text)}"`
  t.equal(answer.headers.get('etag'), etag)
  for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, `W/"x", W/${etag}`, '*']) {
    const notModified = await fetch(`${gateway.url}/model/getModel/leave-form?appId=hr`, {
      headers: { ...READER, 'if-none-match': ifNoneMatch },
    })
    t.equal(notModified.status, 304, ifNoneMatch)
    t.equal(await notModified.text(), '', 'no body')
    t.equal(notModified.headers.get('etag'), etag)
    t.equal(notModified.headers.get('cache-control'), 'public, max-age=28800')
  }
  t.equal(
    (await fetch(`${gateway.url}/model/getModel/leave-form?appId=hr`, { headers: { ...READER, 'if-none-match': '"leave-form-0-x-1"' } }))
      .status,
    200,
    'a stale tag gets the body',
  )

  await client.call('insertModel', 'POST', '/model/insertModel', {
    body: insertModelRequest('leave-form', { ...HR, edit: (body) => void (body.title = 'v2') }),
  })
  const changed = await fetch(`${gateway.url}/model/getModel/leave-form?appId=hr`, { headers: { ...READER, 'if-none-match': etag } })
  t.equal(changed.status, 200, 'a new version changes the ETag at once')
  t.match(changed.headers.get('etag'), /^"leave-form-2-/)
})

t.test('getModel is compressed for a client that accepts it', async (t) => {
  const { gateway, client } = await startGateway(t)
  await addReader(gateway.app.store)
  const fields = Array.from({ length: 200 }, (_, n) => ({ key: `field${n}`, type: 'text', label: `Field number ${n}` }))
  await client.call('insertModel', 'POST', '/model/insertModel', {
    body: insertModelRequest('leave-form', { ...HR, edit: (body) => void (body.fields = fields) }),
  })
  const { request } = await import('undici')
  const answer = await request(`${gateway.url}/model/getModel/leave-form?appId=hr`, { headers: { ...READER, 'accept-encoding': 'gzip' } })
  t.equal(answer.headers['content-encoding'], 'gzip')
  const body = JSON.parse(gunzipSync(Buffer.from(await answer.body.arrayBuffer())).toString('utf8')) as { fields: unknown[] }
  t.equal(body.fields.length, 200)
  t.match(String(answer.headers.etag), /^"leave-form-1-/, 'the ETag names the uncompressed body')
})

t.test('getModel of an unknown model, or of another app, is 404 fm3027', async (t) => {
  const { gateway, client } = await startGateway(t)
  await addReader(gateway.app.store)
  await client.call('insertModel', 'POST', '/model/insertModel', { body: insertModelRequest('leave-form', HR) })
  for (const path of ['/model/getModel/nothing?appId=hr', '/model/getModel/leave-form?appId=finance']) {
    const answer = await fetch(`${gateway.url}${path}`, { headers: READER })
    const body = (await answer.json()) as Envelope<null>
    t.equal(answer.status, 404, path)
    t.match(body, { status: 'customerror', error: { code: 'fm3027' } }, path)
    t.same(contract.errors('getModel', 404, body), [])
  }
})
