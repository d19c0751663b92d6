/**
 * JWT_JWKS_URL (docs/reference/identity.md#identity-modes) — an OIDC provider's key set, served here by a local
 * server on 127.0.0.1 with a generated EC public key. Tokens signed with its private key pass;
 * another key, an HS256 token (whatever its secret), `alg: none` and a token without `exp` do not.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportJWK, generateKeyPair } from 'jose'
import t from 'tap'
import { openTestStore, startService } from '../../services/testing/harness.js'
import { jwtAuthConfig, tokenFor } from '../../services/testing/tokens.js'
import { createTestUser } from '../../services/testing/users.js'

t.test('jwt mode with JWT_JWKS_URL: tokens are verified against the provider key set it serves', async (t) => {
  const provider = await generateKeyPair('ES256')
  const stranger = await generateKeyPair('ES256')
  const jwk = { ...(await exportJWK(provider.publicKey)), kid: 'key-1', alg: 'ES256', use: 'sig' }
  let keySetRequests = 0
  const jwks = createServer((request, response) => {
    keySetRequests++
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }))
  })
  await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => jwks.close(() => resolve())))
  const jwksUrl = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/.well-known/jwks.json`

  const store = await openTestStore(t)
  const user = await createTestUser(store, { appId: 'hr', organizationId: 'acme' })
  const engine = await startService(t, 'engine', { store, config: jwtAuthConfig({ keys: { jwksUrl }, issuer: 'https://id.example.org/' }) })
  const call = async (token: string) => fetch(`${engine.url}/process/p-unknown`, { headers: { authorization: `Bearer ${token}` } })
  const signed = { key: provider.privateKey, alg: 'ES256', kid: 'key-1', issuer: 'https://id.example.org/' }

  const accepted = await call(await tokenFor(user.userId, signed))
  t.equal(accepted.status, 404, "a token of the provider's key passes (and the unknown instance is 404)")
  t.match(await accepted.json(), { code: 'wm3001' })
  const again = await call(await tokenFor(user.userId, signed))
  t.equal(again.status, 404)
  t.equal(keySetRequests, 1, 'the key set is fetched once and cached')

  const refused: Array<[string, string]> = [
    ['another private key under the same kid', await tokenFor(user.userId, { ...signed, key: stranger.privateKey })],
    ['an HS256 token (the key set holds public keys only)', await tokenFor(user.userId, { issuer: 'https://id.example.org/' })],
    ['no exp', await tokenFor(user.userId, { ...signed, expiresInSeconds: null })],
    ['another issuer', await tokenFor(user.userId, { ...signed, issuer: 'https://evil.example.org/' })],
    [
      'alg none',
      `${Buffer.from(JSON.stringify({ alg: 'none', kid: 'key-1' })).toString('base64url')}.${Buffer.from(JSON.stringify({ sub: user.userId, iss: 'https://id.example.org/', exp: Math.floor(Date.now() / 1000) + 600 })).toString('base64url')}.`,
    ],
  ]
  for (const [name, token] of refused) {
    const answer = await call(token)
    t.equal(answer.status, 401, name)
    t.match(await answer.json(), { statusCode: 401, code: 'wm4011' }, name)
  }
})
