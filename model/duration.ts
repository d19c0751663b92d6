/**
 * ISO-8601 durations (`P3D`, `PT2S`, `P1Y2M`, `P2W`, `PT1.5S`) as the model's `dueIn` and
 * escalations' `after` give them: parsed once at insert (validation) and again where a date is
 * computed from one (the runtime, the escalation jobs). Years and months are calendar units, added
 * in UTC (`P1M` after Jan 31 is Mar 3 or Mar 2, as `Date` rolls over); the rest are fixed lengths.
 */

export interface IsoDuration {
  years: number
  months: number
  weeks: number
  days: number
  hours: number
  minutes: number
  seconds: number
}

// Date part, then an optional time part that must name at least one unit; only the last unit may be fractional.
const DURATION = /^P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:[.,]\d{1,9})?)S)?)?$/

/** A duration of a hundred years or more is a typo, not a deadline (the epoch plus a century). */
const MAX_MS = Date.UTC(2070, 0, 1)

/** The duration `text` names, or null when it is not an ISO-8601 duration this engine accepts. */
export function parseIsoDuration(text: string): IsoDuration | null {
  const match = DURATION.exec(text)
  if (!match) return null
  // `P` and `PT` alone name nothing.
  if (match.slice(1).every((part) => part === undefined)) return null
  if (text.includes('T') && match.slice(5).every((part) => part === undefined)) return null
  const number = (index: number): number => Number((match[index] ?? '0').replace(',', '.'))
  const duration = {
    years: number(1),
    months: number(2),
    weeks: number(3),
    days: number(4),
    hours: number(5),
    minutes: number(6),
    seconds: number(7),
  }
  const roughMs = addDuration(new Date(0), duration).getTime()
  return Number.isFinite(roughMs) && roughMs < MAX_MS ? duration : null
}

/** `date` plus the duration (calendar years and months in UTC, then fixed weeks, days and time). */
export function addDuration(date: Date, duration: IsoDuration): Date {
  const result = new Date(date.getTime())
  if (duration.years !== 0 || duration.months !== 0) result.setUTCMonth(result.getUTCMonth() + duration.years * 12 + duration.months)
  const fixedMs =
    (((duration.weeks * 7 + duration.days) * 24 + duration.hours) * 60 + duration.minutes) * 60_000 + Math.round(duration.seconds * 1000)
  return new Date(result.getTime() + fixedMs)
}

/** `date` plus the duration `text` names; throws on one that `parseIsoDuration` refuses (models are validated at insert). */
export function afterDuration(date: Date, text: string): Date {
  const duration = parseIsoDuration(text)
  if (!duration) throw new Error(`not an ISO-8601 duration: ${text}`)
  return addDuration(date, duration)
}
