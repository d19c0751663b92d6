import t from 'tap'
import type { User } from '../../../openapi/generated/schemas.js'
import { Collections } from '../../../store/collections.js'
import { type Envelope, startGateway } from '../../testing/gateway.js'
import { bearerFor, jwtAuthConfig } from '../../testing/tokens.js'
import { createTestUser } from '../../testing/users.js'

const TENANT = { organizationId: 'acme', appId: 'hr' }
const ada = {
  firstName: 'Ada',
  lastName: 'Lovelace',
  fullName: 'Ada Lovelace',
  unit: { id: 'u-eng', name: 'Engineering' },
  roles: ['employee'],
  ...TENANT,
}

t.test('createUser stores the user with a server-generated UUID and answers it', async (t) => {
  const { gateway, client } = await startGateway(t)
  const created = await client.call<Envelope<User>>('createUser', 'POST', '/user/createUser', {
    body: { ...ada, userId: 'chosen-by-client', unknownField: 'dropped' },
  })
  t.equal(created.status, 200)
  t.match(created.body.data.userId, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'a v4 UUID')
  t.not(created.body.data.userId, 'chosen-by-client', 'the client cannot choose the id')
  t.same(
    created.body.data,
    { ...ada, isSystemUser: false, userId: created.body.data.userId },
    'the record as given, isSystemUser defaulting to false',
  )
  const stored = await gateway.app.store.collection(Collections.users).findOne({ userId: created.body.data.userId })
  t.notOk(stored && 'unknownField' in stored, 'unknown fields are never stored')
})

t.test('createUser answers its four documented 400 messages and writes nothing then', async (t) => {
  const { gateway, client } = await startGateway(t)
  await client.call('createUser', 'POST', '/user/createUser', { body: ada })
  const cases: Array<[string, Record<string, unknown>, string, string]> = [
    ['fullName missing', { ...ada, fullName: undefined }, 'fm3001', 'Name is mandatory!'],
    ['fullName blank', { ...ada, fullName: '  ' }, 'fm3001', 'Name is mandatory!'],
    ['unit missing', { ...ada, fullName: 'Bob', unit: undefined }, 'fm3002', 'Unit is mandatory!'],
    ['roles missing', { ...ada, fullName: 'Bob', roles: undefined }, 'fm3003', 'User role is mandatory!'],
    ['roles empty', { ...ada, fullName: 'Bob', roles: [] }, 'fm3003', 'User role is mandatory!'],
    ['duplicate fullName in another case', { ...ada, fullName: 'ADA lovelace' }, 'fm3004', 'Username is already taken.'],
  ]
  for (const [name, body, code, message] of cases) {
    const answer = await client.call<Envelope<null>>('createUser', 'POST', '/user/createUser', { body })
    t.equal(answer.status, 400, name)
    t.match(answer.body, { status: 'customerror', error: { code, message } }, name)
  }
  t.equal(await gateway.app.store.collection(Collections.users).countDocuments({}), 1, 'only the first user is stored')
})

t.test('full names are unique per tenant: another organization or app may hold the same name', async (t) => {
  const { gateway, client } = await startGateway(t)
  await client.call('createUser', 'POST', '/user/createUser', { body: ada })
  for (const [name, tenant] of [
    ['the same app of another organization', { appId: ada.appId, organizationId: 'other' }],
    ['another app of the same organization', { appId: 'finance', organizationId: ada.organizationId }],
  ] as const) {
    const answer = await client.call<Envelope<User>>('createUser', 'POST', '/user/createUser', { body: { ...ada, ...tenant } })
    t.equal(answer.status, 200, name)
  }
  const again = await client.call<Envelope<null>>('createUser', 'POST', '/user/createUser', { body: { ...ada, organizationId: 'other' } })
  t.match(again.body, { error: { code: 'fm3004' } }, 'within a tenant the name is still taken')
  t.equal(await gateway.app.store.collection(Collections.users).countDocuments({}), 3)
})

t.test('of concurrent creates with one name (any case) exactly one wins', async (t) => {
  const { gateway, client } = await startGateway(t)
  const names = ['Grace Hopper', 'GRACE HOPPER', 'grace hopper', 'Grace hopper', 'gRACE hOPPER', 'Grace Hopper']
  const answers = await Promise.all(
    names.map((fullName) => client.call<Envelope<User>>('createUser', 'POST', '/user/createUser', { body: { ...ada, fullName } })),
  )
  t.equal(answers.filter((answer) => answer.status === 200).length, 1, 'one is created')
  t.equal(
    answers.filter((answer) => answer.body.error?.code === 'fm3004').length,
    names.length - 1,
    'the others are told the name is taken',
  )
  t.equal(await gateway.app.store.collection(Collections.users).countDocuments({}), 1)
})

t.test('updateUser replaces the stored document whole, without validation', async (t) => {
  const { client } = await startGateway(t)
  const created = (
    await client.call<Envelope<User>>('createUser', 'POST', '/user/createUser', {
      body: { ...ada, email: 'ada@example.org', swimlanes: ['employee'] },
    })
  ).body.data
  await client.call('createUser', 'POST', '/user/createUser', { body: { ...ada, fullName: 'Charles Babbage' } })
  // No unit, no roles, another user's name: all accepted, and the old fields are gone.
  const replacement = { userId: created.userId, fullName: 'Charles Babbage', ...TENANT }
  const updated = await client.call<Envelope<User>>('updateUser', 'POST', '/user/updateUser', { body: replacement })
  t.equal(updated.status, 200)
  t.same(updated.body.data, { ...replacement, isSystemUser: false })
  const fetched = await client.call<Envelope<User>>('getUserById', 'GET', `/user/getUserById/${created.userId}`)
  t.same(fetched.body.data, { ...replacement, isSystemUser: false }, 'email, swimlanes, unit and roles were replaced away')
})

t.test('updateUser of an unknown or missing userId is 404 User not found!', async (t) => {
  const { gateway, client } = await startGateway(t)
  for (const body of [{ ...ada, userId: 'nobody' }, ada]) {
    const answer = await client.call<Envelope<null>>('updateUser', 'POST', '/user/updateUser', { body })
    t.equal(answer.status, 404)
    t.match(answer.body.error, { code: 'fm3005', message: 'User not found!' })
  }
  t.equal(await gateway.app.store.collection(Collections.users).countDocuments({}), 0, 'no user was created by an update')
})

t.test('a created user keeps its name reserved, and a freed name can be taken again', async (t) => {
  const { client } = await startGateway(t)
  const first = (await client.call<Envelope<User>>('createUser', 'POST', '/user/createUser', { body: ada })).body.data
  await client.call('updateUser', 'POST', '/user/updateUser', { body: { ...ada, userId: first.userId, fullName: 'Augusta King' } })
  t.equal((await client.call('createUser', 'POST', '/user/createUser', { body: ada })).status, 200, 'the old name is free after a rename')
  t.equal(
    (await client.call('createUser', 'POST', '/user/createUser', { body: { ...ada, fullName: 'augusta king' } })).status,
    400,
    'the new name is taken',
  )
})

t.test('deleteUser removes the user for good; an unknown id is 404', async (t) => {
  const { client } = await startGateway(t)
  const created = (await client.call<Envelope<User>>('createUser', 'POST', '/user/createUser', { body: ada })).body.data
  const deleted = await client.call<Envelope<{ message: string }>>(
    'deleteUser',
    'DELETE',
    '/user/deleteUser?organizationId=acme&appId=hr',
    { body: { id: created.userId } },
  )
  t.same(deleted.body, { status: 'success', data: { message: 'User deleted successfully' } })
  t.equal((await client.call<Envelope<null>>('getUserById', 'GET', `/user/getUserById/${created.userId}`)).body.data, null)
  const again = await client.call<Envelope<null>>('deleteUser', 'DELETE', '/user/deleteUser', { body: { id: created.userId } })
  t.equal(again.status, 404)
  t.match(again.body.error, { code: 'fm3005', message: 'User not found!' })
  t.equal((await client.call('deleteUser', 'DELETE', '/user/deleteUser', { body: {} })).status, 400, 'id is required')
})

t.test('getUserById answers null (200) for an unknown id', async (t) => {
  const { client } = await startGateway(t)
  const answer = await client.call<Envelope<null>>('getUserById', 'GET', '/user/getUserById/no-such-user')
  t.equal(answer.status, 200)
  t.same(answer.body, { status: 'success', data: null })
})

t.test('listWorkflowUsers lists the users of the organizationId + appId given as query parameters', async (t) => {
  const { client } = await startGateway(t)
  await client.call('createUser', 'POST', '/user/createUser', { body: ada })
  await client.call('createUser', 'POST', '/user/createUser', { body: { ...ada, fullName: 'Bob' } })
  await client.call('createUser', 'POST', '/user/createUser', { body: { ...ada, fullName: 'Carol', appId: 'finance' } })
  await client.call('createUser', 'POST', '/user/createUser', { body: { ...ada, fullName: 'Dan', organizationId: 'other' } })
  const names = async (query: string) =>
    (await client.call<Envelope<User[]>>('listWorkflowUsers', 'GET', `/user/listWorkflowUsers${query}`)).body.data.map(
      (user) => user.fullName,
    )
  t.same(await names('?organizationId=acme&appId=hr'), ['Ada Lovelace', 'Bob'])
  t.same(await names('?organizationId=acme&appId=finance'), ['Carol'])
  t.same(await names('?organizationId=nobody&appId=hr'), [])
})

t.test('GET /me answers the acting user to itself, in header and jwt mode, also to a user that is no admin', async (t) => {
  for (const mode of ['header', 'jwt'] as const) {
    const { gateway, client } = await startGateway(t, mode === 'jwt' ? { config: jwtAuthConfig() } : {})
    const user = await createTestUser(gateway.app.store, { ...TENANT, fullName: `Eve ${mode}`, swimlanes: ['employee'] })
    const identity = mode === 'jwt' ? await bearerFor(user.userId) : { user: user.userId }
    const me = await client.call<Envelope<User>>('getCurrentUser', 'GET', '/me', { headers: identity })
    t.equal(me.status, 200, `${mode}: 200`)
    t.same(
      me.body.data,
      {
        userId: user.userId,
        fullName: `Eve ${mode}`,
        roles: ['user'],
        swimlanes: ['employee'],
        unit: user.unit,
        ...TENANT,
        isSystemUser: false,
      },
      `${mode}: the user itself, nothing of another`,
    )
    const nobody = await client.call<Envelope<null>>('getCurrentUser', 'GET', '/me')
    t.equal(nobody.status, 401, `${mode}: without a user, 401`)
    t.equal(nobody.body.error?.code, 'fm4012')
  }
})
