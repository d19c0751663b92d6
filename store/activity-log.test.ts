import t from 'tap'
import { ACTIVITY_LOG_LENGTH, appendedLog, newestFirst } from './activity-log.js'
import type { ActivityLogEntry } from './collections.js'

const entry = (second: number, type: ActivityLogEntry['type'] = 'save'): ActivityLogEntry => ({
  timeStamp: `2025-06-30T08:00:${String(second).padStart(2, '0')}.000Z`,
  type,
  userId: 'alice',
})

t.test('appending keeps at most ACTIVITY_LOG_LENGTH entries and gives the oldest others back, oldest first', async (t) => {
  t.same(appendedLog(undefined, [entry(1)]), { log: [entry(1)], moved: [] }, 'an instance of an earlier release starts a log')
  const full = Array.from({ length: ACTIVITY_LOG_LENGTH }, (_, n) => entry(n))
  t.same(appendedLog(full.slice(1), [entry(40)]), { log: [...full.slice(1), entry(40)], moved: [] }, 'filling the log moves nothing')
  t.same(appendedLog(full, [entry(40), entry(41)]), { log: [...full.slice(2), entry(40), entry(41)], moved: [entry(0), entry(1)] })
  t.same(appendedLog(full, []), { log: full, moved: [] }, 'a change without records keeps the log')
})

t.test('the log and the collected records merge newest first, the log first within a millisecond', async (t) => {
  const collected = [
    { processInstanceId: 'pi-1', ...entry(5, 'fileUpload') },
    { processInstanceId: 'pi-1', ...entry(2, 'display') },
    { processInstanceId: 'pi-1', ...entry(1, 'start') },
  ]
  const merged = newestFirst('pi-1', [entry(3, 'save'), entry(5, 'complete'), entry(6, 'display')], collected)
  t.same(
    merged.map((record) => `${record.timeStamp.slice(17, 19)} ${record.type}`),
    ['06 display', '05 complete', '05 fileUpload', '03 save', '02 display', '01 start'],
  )
  t.same(merged[0], { processInstanceId: 'pi-1', ...entry(6, 'display') }, "a log entry is read with its instance's id")
  t.same(newestFirst('pi-1', undefined, collected), collected, 'without a log, the collected records as they are')
})
