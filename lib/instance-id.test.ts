import t from 'tap'
import { newInstanceId } from './instance-id.js'

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

t.test('ids made within one millisecond are UUIDv7s that sort in the order they were made', async (t) => {
  const realNow = Date.now
  t.teardown(() => {
    Date.now = realNow
  })
  Date.now = () => Date.UTC(2026, 11, 4, 12)
  // More ids than one draw of random bits holds, so a second draw is made on the way.
  const ids = Array.from({ length: 600 }, () => newInstanceId())
  for (const id of ids) t.match(id, UUID_V7)
  t.same([...ids].sort(), ids, 'in the order they were made')
  t.equal(new Set(ids).size, ids.length, 'none repeats')
  t.ok(
    ids.every((id) => id.startsWith(ids[0]!.slice(0, 13))),
    'all carry the same millisecond',
  )
  Date.now = () => Date.UTC(2026, 11, 4, 12, 0, 0, 1)
  const later = newInstanceId()
  t.ok(later > (ids.at(-1) ?? ''), 'a later millisecond sorts after')
})
