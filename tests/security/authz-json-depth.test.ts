/**
 * Finding 6 (part): JSON nested deeper than MAX_JSON_DEPTH is a fast 400 envelope on both
 * services, before any work: 2,000 levels made `/notify` and `/model/insertModel` never answer and
 * 5,000 levels on `/action/save` was a 500.
 */
import fc from 'fast-check'
import t from 'tap'
import { JsonDepthScanner, nestsDeeperThan } from '../../plugins/json-depth/scanner.js'
import { snapshotTenantA, startSecureStack, TENANT_A } from './authz-stack.js'

/** `{"a":{"a":...}}` (objects) or `[[[...]]]` (arrays) nested `levels` deep. */
function nested(levels: number, kind: 'object' | 'array'): string {
  return kind === 'object' ? `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}` : `${'['.repeat(levels)}1${']'.repeat(levels)}`
}

/** A body whose `field` holds the nesting, so it is otherwise a plausible request. */
function bodyWith(base: Record<string, unknown>, field: string, levels: number, kind: 'object' | 'array'): string {
  const text = JSON.stringify({ ...base, [field]: '__NESTED__' })
  return text.replace('"__NESTED__"', nested(levels, kind))
}

/** Reference depth of a parsed value (recursive: only for the small generated values). */
function depthOf(value: unknown): number {
  if (Array.isArray(value)) return 1 + Math.max(0, ...value.map(depthOf))
  if (typeof value === 'object' && value !== null) return 1 + Math.max(0, ...Object.values(value).map(depthOf))
  return 0
}

t.test('the scanner measures nesting as the parsed value has it, strings and escapes included', async (t) => {
  fc.assert(
    fc.property(
      fc.jsonValue({ maxDepth: 8 }),
      fc.integer({ min: 0, max: 9 }),
      (value, limit) => nestsDeeperThan(JSON.stringify(value), limit) === depthOf(value) > limit,
    ),
    { numRuns: 500 },
  )
  t.notOk(nestsDeeperThan('{"a":"[[[[[[[[[[{{{{{{\\"[[["}', 1), 'brackets inside strings, and escaped quotes, do not count')
  t.ok(nestsDeeperThan('[[["\\\\"]]]', 2), 'an escaped backslash ends its escape')
  const scanner = new JsonDepthScanner(3)
  t.ok(scanner.push(Buffer.from('[["[')), 'chunks carry the string state over')
  t.ok(scanner.push(Buffer.from(']"]]')))
  t.notOk(new JsonDepthScanner(3).push(Buffer.from('[[[[')), 'the fourth level is past a limit of 3')
})

t.test('the scanner takes a million levels in constant stack space, in one pass', async (t) => {
  // A recursive scanner would overflow the stack here, and one slower than linear would not end within the test's timeout.
  const deep = Buffer.from('['.repeat(1_000_000))
  t.ok(nestsDeeperThan(deep, 64))
  t.notOk(nestsDeeperThan(Buffer.from(`[${'{"a":[1,"]]"]},'.repeat(100_000)}1]`), 64), 'a wide body within the limit')
})

t.test('2,000 and 5,000 levels answer 400 on /notify, /model/insertModel and /action/save, and change nothing', async (t) => {
  const stack = await startSecureStack(t)
  const { processInstanceId, businessKey, taskId } = stack.resources
  const cases: Array<[string, string, Record<string, unknown>, string]> = [
    ['upsertNotification', '/notify', { ...TENANT_A }, 'notificationObject'],
    ['insertModel', '/model/insertModel', { ...TENANT_A, live: true }, 'model'],
    ['saveAction', '/action/save', { ...TENANT_A, processId: 'leave-request', processInstanceId, businessKey, taskId }, 'dataInstance'],
  ]
  const before = await snapshotTenantA(stack.store)
  for (const [operationId, path, base, field] of cases) {
    for (const levels of [2_000, 5_000]) {
      for (const kind of ['object', 'array'] as const) {
        const answer = await stack.send('POST', path, { as: stack.a.employee, body: bodyWith(base, field, levels, kind), operationId })
        t.equal(answer.status, 400, `${operationId}: ${levels} levels of ${kind}s`)
        // Refused by the depth scan before any parser recursed into it (which would fail otherwise, not answer this).
        t.match(answer.body, { status: 'customerror', error: { code: /^(fm|wm)4002$/, message: /nested deeper than 64 levels/ } })
      }
    }
  }
  t.equal(await snapshotTenantA(stack.store), before, 'nothing stored')
  t.equal(await stack.store.collection('models').countDocuments({ modelID: 'a' }), 0)
})

t.test('the engine refuses deep bodies itself, on every route, and MAX_JSON_DEPTH moves the limit', async (t) => {
  const stack = await startSecureStack(t, { config: { maxJsonDepth: 10 } })
  const { processInstanceId } = stack.resources
  const direct = await fetch(`${stack.engineUrl}/context/activity`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', user: stack.a.employee.userId },
    body: bodyWith({ ...TENANT_A, processInstanceId }, 'extra', 11, 'array'),
  })
  t.equal(direct.status, 400)
  t.match(await direct.json(), { code: 'wm4002', parameters: { field: 'body' } }, 'an ICustomError record from the engine')
  const within = await stack.send('POST', '/context/activity', {
    as: stack.a.employee,
    body: bodyWith({ ...TENANT_A, processInstanceId }, 'extra', 8, 'array'),
    operationId: 'listContextActivity',
  })
  t.equal(within.status, 200, 'nesting within the limit is served (the unknown field is dropped)')
  const gatewayDirect = await stack.send('POST', '/user/createUser', {
    body: bodyWith({ fullName: 'Deep Diver' }, 'unit', 11, 'object'),
    operationId: 'createUser',
  })
  t.match(gatewayDirect, { status: 400, body: { error: { code: 'fm4002' } } }, 'a gateway route too')
  const typed = await fetch(`${stack.gatewayUrl}/notify`, {
    method: 'POST',
    headers: { 'content-type': 'application/merge-patch+json' },
    body: nested(20, 'array'),
  })
  t.not(typed.status, 500, 'a +json type is never a 500')
})
