import t from 'tap'
import type { ContractTest } from '../../testing/workflow.js'
import type { DataSearchResult } from '../../../openapi/generated/schemas.js'
import { RuntimeError } from '../../../runtime/types.js'
import { dataCollectionName } from '../../testing/models.js'
import { HR, startHrEngine } from '../../testing/workflow.js'
import { OutboundPolicy } from '../flow-host/outbound-policy.js'
import { StoreFlowHost } from '../flow-host/host.js'
import { modelRepository } from '../models/repository.js'
import { storedLookups } from '../models/service.js'
import { UnitOfWork } from '../flow-host/unit-of-work.js'

async function seededEngine(t: ContractTest) {
  const engine = await startHrEngine(t)
  const bookings = engine.store.collection(dataCollectionName({ organizationId: 'acme', appId: 'hr' }, 'leave-bookings'))
  for (let index = 1; index <= 12; index++)
    await bookings.insertOne({ businessKey: `LR-${index}`, days: index, employee: index % 2 === 0 ? 'eve' : 'carl' })
  return engine
}

t.test('a search pages through a data collection found by its name, with filter, sort, projection and total', async (t) => {
  const engine = await seededEngine(t)
  const search = (body: Record<string, unknown>) =>
    engine.call<DataSearchResult>('searchDataCollection', 'POST', '/external/data/search/Leave%20bookings', {
      user: engine.users.employee.userId,
      body: { ...HR, ...body },
    })
  const page = await search({
    filter: { days: { $gte: 5 }, employee: { $in: ['eve'] } },
    sort: { days: -1 },
    projection: { _id: 0, businessKey: 1, days: 1 },
    skip: 1,
    limit: 2,
  })
  t.same(page.body, {
    items: [
      { businessKey: 'LR-10', days: 10 },
      { businessKey: 'LR-8', days: 8 },
    ],
    total: 4,
    skip: 1,
    limit: 2,
  })
  const regex = await search({
    filter: { businessKey: { $regex: '^lr-1', $options: 'i' } },
    projection: { _id: 0, days: 1 },
    sort: { days: 1 },
  })
  t.same(regex.body.items, [{ days: 1 }, { days: 10 }, { days: 11 }, { days: 12 }])
  t.equal(regex.body.limit, 50, 'limit defaults to 50')
})

t.test('filters outside the allow-list, unbounded patterns and limits over 1000 are refused', async (t) => {
  const engine = await seededEngine(t)
  const search = (body: Record<string, unknown>) =>
    engine.call('searchDataCollection', 'POST', '/external/data/search/Leave%20bookings', {
      user: engine.users.employee.userId,
      body: { ...HR, ...body },
    })
  for (const operator of ['$where', '$function', '$expr', '$accumulator', '$text', '$lookup']) {
    t.match(
      await search({ filter: { $and: [{ days: 1 }, { [operator]: 'x' }] } }),
      { status: 400, body: { code: 'wm3100', parameters: { operator } } },
      `${operator} is refused`,
    )
  }
  t.match(
    await search({ filter: { businessKey: { $regex: 'a'.repeat(257) } } }),
    { status: 400, body: { code: 'wm4000' } },
    'a pattern longer than 256 characters',
  )
  t.match(
    await search({ filter: { businessKey: { $regex: 'a', $options: 'g' } } }),
    { status: 400, body: { code: 'wm4000' } },
    'unknown regex flags',
  )
  t.match(await search({ limit: 1001 }), { status: 400, body: { code: 'wm4000' } })
  t.match(await search({ sort: { $natural: 1 } }), { status: 400, body: { code: 'wm4000', parameters: { field: 'body.sort' } } })
})

t.test("a collection is found only in the request's app", async (t) => {
  const engine = await seededEngine(t)
  const user = engine.users.employee.userId
  t.match(await engine.call('searchDataCollection', 'POST', '/external/data/search/Nope', { user, body: { ...HR } }), {
    status: 404,
    body: { code: 'wm3101' },
  })
  t.match(await engine.call('searchDataCollection', 'POST', '/external/data/search/Leave%20bookings', { user, body: { appId: 'sales' } }), {
    status: 404,
    body: { code: 'wm3101' },
  })
  t.match(
    await engine.call('searchDataCollection', 'POST', '/external/data/search/Leave%20bookings', {
      user: engine.users.stranger.userId,
      body: { appId: 'hr' },
    }),
    { status: 404, body: { code: 'wm3101' } },
    'a user of another app does not see it',
  )
  t.match(
    await engine.call('searchDataCollection', 'POST', '/external/data/search/Leave%20bookings', { body: { ...HR } }),
    { status: 401, body: { code: 'wm4010' } },
    'no user',
  )
  const asUser = await engine.call<DataSearchResult>('searchDataCollection', 'POST', '/external/data/search/Leave%20bookings', {
    user: engine.users.employee.userId,
    body: {},
  })
  t.equal(asUser.body.total, 12, "the user's app when the request names none")
})

t.test('the data node of a flow function obeys the same pattern bound', async (t) => {
  const engine = await seededEngine(t)
  const policy = new OutboundPolicy({ allowedHosts: [], forwardHeaders: [], ownPorts: () => [] })
  const dispatcher = policy.dispatcher()
  t.teardown(() => dispatcher.close())
  const host = new StoreFlowHost({
    store: engine.store,
    dispatcher,
    policy,
    unitOfWork: new UnitOfWork(engine.store),
    ...HR,
    appFunctions: new Map(),
    deployed: storedLookups(modelRepository(engine.store), HR),
    additionalHeaders: {},
  })
  await t.rejects(
    host.data({ operation: 'find', collection: 'Leave bookings', filter: { businessKey: { $regex: 'a'.repeat(300) } } }),
    RuntimeError,
  )
  t.equal(
    ((await host.data({ operation: 'find', collection: 'Leave bookings', filter: { businessKey: { $regex: '^LR-1$' } } })) as unknown[])
      .length,
    1,
  )
})
