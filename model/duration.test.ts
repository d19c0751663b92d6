import fc from 'fast-check'
import t from 'tap'
import { addDuration, afterDuration, parseIsoDuration } from './duration.js'

const T0 = new Date('2026-01-31T10:00:00.000Z')

t.test('ISO-8601 durations of every unit are read and added to a date', async (t) => {
  t.equal(afterDuration(T0, 'PT2S').toISOString(), '2026-01-31T10:00:02.000Z')
  t.equal(afterDuration(T0, 'PT1.5S').toISOString(), '2026-01-31T10:00:01.500Z')
  t.equal(afterDuration(T0, 'PT0,25S').toISOString(), '2026-01-31T10:00:00.250Z', 'a decimal comma as ISO allows')
  t.equal(afterDuration(T0, 'PT90M').toISOString(), '2026-01-31T11:30:00.000Z')
  t.equal(afterDuration(T0, 'P3D').toISOString(), '2026-02-03T10:00:00.000Z')
  t.equal(afterDuration(T0, 'P2W').toISOString(), '2026-02-14T10:00:00.000Z')
  t.equal(afterDuration(T0, 'P1DT12H').toISOString(), '2026-02-01T22:00:00.000Z')
  t.equal(
    afterDuration(new Date('2026-01-15T00:00:00Z'), 'P1Y2M').toISOString(),
    '2027-03-15T00:00:00.000Z',
    'years and months are calendar units',
  )
  t.same(parseIsoDuration('P1Y2M3W4DT5H6M7S'), { years: 1, months: 2, weeks: 3, days: 4, hours: 5, minutes: 6, seconds: 7 })
})

/** Texts that are no duration this engine accepts, and why. */
const refused: Array<[text: string, why: string]> = [
  ['', 'empty'],
  ['P', 'names no time'],
  ['PT', 'names no time'],
  ['3D', 'no leading P'],
  ['P3', 'a number without its unit'],
  ['PT2', 'a number without its unit'],
  ['P1.5D', 'only seconds may be fractional'],
  ['P-1D', 'negative'],
  ['p3d', 'lower case'],
  ['P3D ', 'a trailing space'],
  ['PT1H2S3M', 'units out of order'],
  ['P1S', 'seconds outside the time part'],
  ['PT1D', 'days inside the time part'],
  ['P3DT', 'a time part that names no unit'],
  ['P100Y', 'a century'],
  ['P99999999999999999999D', 'beyond any date'],
]

t.test('what is not an ISO-8601 duration, or names no time, or a century or more, is refused', async (t) => {
  for (const [text, why] of refused) t.equal(parseIsoDuration(text), null, `${JSON.stringify(text)}: ${why}`)
  t.throws(() => afterDuration(T0, 'soon'), /not an ISO-8601 duration: soon/)
})

t.test('a duration of fixed units adds exactly its length in milliseconds', async () => {
  fc.assert(
    fc.property(fc.nat(30), fc.nat(23), fc.nat(59), fc.nat(59), (days, hours, minutes, seconds) => {
      const text = `P${days}DT${hours}H${minutes}M${seconds}S`
      const parsed = parseIsoDuration(text)
      if (!parsed) return false
      return addDuration(T0, parsed).getTime() - T0.getTime() === (((days * 24 + hours) * 60 + minutes) * 60 + seconds) * 1000
    }),
  )
})
