/** The filter of cold ids (cold-ids.ts): never forgets an id it was given, grows past its first stage, rules out nearly every other id. */
import t from 'tap'
import { ColdIdFilter } from './cold-ids.js'

t.test('every id added is a maybe, across the stages it grows into; nearly every other id is ruled out', async (t) => {
  const filter = new ColdIdFilter(1000)
  const added = Array.from({ length: 300_000 }, (_, i) => `s:${i.toString(16).padStart(24, '0')}`)
  for (const id of added) filter.add(id)
  t.ok(
    added.every((id) => filter.mayHold(id)),
    'no added id is ruled out (300,000 ids: several stages past the first)',
  )
  const others = Array.from({ length: 100_000 }, (_, i) => `s:other-${i}`)
  const falsePositives = others.filter((id) => filter.mayHold(id)).length
  t.ok(falsePositives < 5_000, `few ids never added are maybes (${falsePositives} of 100,000)`)
})

t.test('an empty filter rules out every id', async (t) => {
  const filter = new ColdIdFilter()
  t.notOk(filter.mayHold('s:anything'))
})
