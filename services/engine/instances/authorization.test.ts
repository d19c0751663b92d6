import t from 'tap'
import { openTestStore } from '../../testing/harness.js'
import { sampleInstance, sampleTask } from '../../testing/instances.js'
import type { ProcessInstance } from '../../../runtime/types.js'
import { queryFields } from '../../../store/context-fields.js'
import { accessTo, mayActOnTask, type Principal, visibleContextsFilter, visibleInstancesFilter } from './authorization.js'

function principal(overrides: Partial<Principal> = {}): Principal {
  return { userId: 'zoe', roles: ['user'], swimlanes: [], appId: 'hr', organizationId: 'acme', ...overrides }
}

const instances: ProcessInstance[] = [
  sampleInstance({ processInstanceId: 'initiated-by-zoe', initiator: 'zoe', tasks: [] }),
  sampleInstance({ processInstanceId: 'zoe-contributed', contributorUsers: ['bob', 'zoe'], tasks: [] }),
  sampleInstance({ processInstanceId: 'assigned-to-zoe', tasks: [sampleTask({ userId: 'zoe', swimlane: 'manager' })] }),
  sampleInstance({ processInstanceId: 'was-assigned-to-zoe', tasks: [sampleTask({ userId: 'zoe', status: 'completed' })] }),
  sampleInstance({ processInstanceId: 'open-in-manager-lane', tasks: [sampleTask({ swimlane: 'manager' })] }),
  sampleInstance({ processInstanceId: 'closed-in-manager-lane', tasks: [sampleTask({ swimlane: 'manager', status: 'completed' })] }),
  sampleInstance({ processInstanceId: 'someone-elses', tasks: [sampleTask({ userId: 'bob' })] }),
  sampleInstance({ processInstanceId: 'other-app', appId: 'sales', initiator: 'zoe' }),
  sampleInstance({ processInstanceId: 'other-org', organizationId: 'globex', initiator: 'zoe' }),
]

t.test('initiator, contributor, assignee or swimlane member of an open task, or admin; never another tenant', async (t) => {
  const zoe = principal({ swimlanes: ['manager'] })
  const granted = instances.filter((instance) => accessTo(zoe, instance) === 'granted').map((instance) => instance.processInstanceId)
  t.same(granted, ['initiated-by-zoe', 'zoe-contributed', 'assigned-to-zoe', 'open-in-manager-lane'])
  t.equal(accessTo(zoe, instances[5] as ProcessInstance), 'notAuthorized', 'a closed task of her lane does not count')
  t.equal(accessTo(zoe, instances[7] as ProcessInstance), 'otherTenant')
  t.equal(accessTo(zoe, instances[8] as ProcessInstance), 'otherTenant', 'the organization is part of the tenant')
  const admin = principal({ roles: ['admin'] })
  t.same(
    instances.filter((instance) => accessTo(admin, instance) === 'granted').length,
    7,
    'an admin sees the whole tenant and nothing more',
  )
})

t.test('the store filters select exactly the instances the predicate grants', async (t) => {
  const store = await openTestStore(t)
  const contexts = store.collection('authorization-filter-check')
  // As stored contexts hold them: the instance, the tenant and the query fields beside it.
  await contexts.insertMany(
    instances.map((processInstance) => ({
      _id: processInstance.processInstanceId,
      processInstance,
      organizationId: processInstance.organizationId,
      appId: processInstance.appId,
      ...queryFields(processInstance),
    })),
  )
  const principals = [
    principal(),
    principal({ swimlanes: ['manager'] }),
    principal({ userId: 'bob' }),
    principal({ roles: ['admin'] }),
    principal({ appId: 'sales' }),
  ]
  for (const who of principals) {
    const expected = instances
      .filter((instance) => accessTo(who, instance) === 'granted')
      .map((instance) => instance.processInstanceId)
      .sort()
    const label = `${who.userId} ${who.roles.join()} ${who.swimlanes.join()} ${who.appId}`
    for (const [name, filter] of [
      ['on the instance', visibleInstancesFilter(who)],
      ['on the query fields', visibleContextsFilter(who)],
    ] as const) {
      const found = (await contexts.find(filter).toArray()).map((doc) => doc._id as string).sort()
      t.same(found, expected, `${name}: ${label}`)
    }
  }
})

t.test('a task is worked on by its assignee, by its swimlane while in the pool, or by an admin', async (t) => {
  const member = principal({ swimlanes: ['manager'] })
  t.ok(mayActOnTask(member, sampleTask({ swimlane: 'manager' })), 'pool task of her lane')
  t.notOk(mayActOnTask(member, sampleTask({ swimlane: 'manager', userId: 'bob' })), 'assigned to somebody else')
  t.ok(mayActOnTask(principal(), sampleTask({ swimlane: 'manager', userId: 'zoe' })), 'assigned to her outside her lanes')
  t.notOk(mayActOnTask(principal(), sampleTask({ swimlane: 'manager' })), 'pool task of another lane')
  t.ok(mayActOnTask(principal({ roles: ['admin'] }), sampleTask({ userId: 'bob' })), 'admin')
})
