/**
 * Authentication, route by route (docs/reference/identity.md#identity-modes): a matrix generated from the OpenAPI documents the
 * services serve, in AUTH_MODE=jwt. Every operation that is not public (`security: []`) answers 401
 * permissionError without a bearer token — even with the `user` header of a real user — and with a
 * token the service cannot verify; the public ones answer without one.
 */
import t from 'tap'
import { loadOpenApiDocument } from '../../plugins/docs/plugin.js'
import { ContractChecker, operationsOf } from '../../services/testing/contract.js'
import { openTestStore, startService } from '../../services/testing/harness.js'
import { jwtAuthConfig, tokenFor } from '../../services/testing/tokens.js'
import { createTestUser } from '../../services/testing/users.js'

const SERVICES = ['engine', 'gateway'] as const

/** `/process/{processInstanceId}` -> `/process/x`: any value reaches the route; the check comes before validation. */
function concretePath(path: string): string {
  return path.replace(/\{[^}]+\}/g, 'x')
}

function isPublic(document: ReturnType<typeof loadOpenApiDocument>, operation: Record<string, unknown>): boolean {
  const security = (operation.security ?? (document as { security?: unknown[] }).security ?? []) as unknown[]
  return security.length === 0
}

t.test('jwt mode: every operation of both documents but the public ones answers 401 permissionError without a valid token', async (t) => {
  const store = await openTestStore(t)
  const user = await createTestUser(store, { appId: 'hr', organizationId: 'acme', roles: ['admin'], isSystemUser: true })
  const engine = await startService(t, 'engine', { store, config: jwtAuthConfig() })
  const gateway = await startService(t, 'gateway', { store, config: { ...jwtAuthConfig(), engineUrl: engine.url } })
  const urls = { engine: engine.url, gateway: gateway.url }
  const badToken = await tokenFor(user.userId, { secret: 'not-the-secret-0123456789abcdef0123456789' })

  let checked = 0
  for (const service of SERVICES) {
    const document = loadOpenApiDocument(service)
    const contract = new ContractChecker(service, document)
    const operations = operationsOf(document).filter(({ operation }) => !isPublic(document, operation))
    t.ok(operations.length > (service === 'engine' ? 30 : 40), `${service}: the document lists its operations (${operations.length})`)
    for (const { method, path, operation } of operations) {
      const operationId = operation.operationId as string
      for (const [attempt, headers] of [
        ['no token, a real user header', { user: user.userId }],
        ['a token of another key', { authorization: `Bearer ${badToken}` }],
      ] as const) {
        const body = method === 'get' || method === 'delete' ? undefined : '{}'
        const response = await fetch(`${urls[service]}${concretePath(path)}`, {
          method: method.toUpperCase(),
          headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          ...(body === undefined ? {} : { body }),
        })
        const answer = (await response.json()) as Record<string, unknown>
        const name = `${service} ${method.toUpperCase()} ${path} (${attempt})`
        t.equal(response.status, 401, name)
        if (service === 'gateway')
          t.match(answer, { status: 'permissionError', data: null, error: { code: /^(fm4012|wm4011)$/ } }, `${name}: in the envelope`)
        else t.match(answer, { statusCode: 401, code: 'wm4011' }, `${name}: the engine's error record`)
        t.same(contract.errors(operationId, response.status, answer), [], `${name}: the 401 is documented`)
        checked++
      }
    }
  }
  t.ok(checked > 150, `${checked} requests refused`)

  for (const [service, path] of [
    ['engine', '/liveness'],
    ['gateway', '/liveness'],
    ['gateway', '/healthcheck'],
    ['gateway', '/docs/json'],
  ] as const) {
    t.equal((await fetch(`${urls[service]}${path}`)).status, 200, `${service} ${path} is public`)
  }
  t.equal(
    (await fetch(`${gateway.url}/settings/app`, { headers: { referer: 'https://portal.example.org/?appId=hr' } })).status,
    404,
    '/settings/:file is public (no settings model: 404, not 401)',
  )
})
