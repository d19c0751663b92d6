import t from 'tap'
import { openTestStore } from '../../testing/harness.js'
import { activityRepository } from './activities.js'

t.test('activity reads newest first, also among records of the same millisecond, and per instance only', async (t) => {
  const activities = activityRepository(await openTestStore(t))
  const at = '2025-06-30T08:00:00.000Z'
  await activities.record({ processInstanceId: 'pi-1', timeStamp: '2025-06-30T07:59:59.000Z', type: 'start', userId: 'alice' })
  await activities.record({ processInstanceId: 'pi-1', timeStamp: at, type: 'display', userId: 'alice' })
  await activities.record({ processInstanceId: 'pi-1', timeStamp: at, type: 'save', userId: 'alice', taskId: 't1', stepId: 'request' })
  await activities.record({ processInstanceId: 'pi-2', timeStamp: at, type: 'start', userId: null })
  const log = await activities.listFor('pi-1')
  t.same(
    log.map((record) => record.type),
    ['save', 'display', 'start'],
  )
  t.same(
    log[0],
    { processInstanceId: 'pi-1', timeStamp: at, type: 'save', userId: 'alice', taskId: 't1', stepId: 'request' },
    'records come back without store ids',
  )
})
