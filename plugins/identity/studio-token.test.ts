import { createHmac } from 'node:crypto'
import t from 'tap'
import { signStudioToken, verifyStudioToken } from './studio-token.js'

const SECRET = 'studio-secret-0123456789abcdef0123456789'
const NOW = Date.UTC(2025, 5, 30, 8, 0, 0)
const nowSeconds = NOW / 1000

function forged(header: Record<string, unknown>, claims: Record<string, unknown>, secret = SECRET): string {
  const input = `${Buffer.from(JSON.stringify(header)).toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`
}

t.test('a token signed with the secret is valid and gives its claims', async (t) => {
  const verdict = verifyStudioToken(signStudioToken({ sub: 'client-1', exp: nowSeconds + 60 }, SECRET), SECRET, NOW)
  t.same(verdict, { valid: true, claims: { sub: 'client-1', exp: nowSeconds + 60 } })
})

t.test('a token valid for exactly 24 hours passes', async (t) => {
  t.equal(verifyStudioToken(signStudioToken({ sub: 'c', exp: nowSeconds + 24 * 3600 }, SECRET), SECRET, NOW).valid, true)
})

t.test('tokens that must not pass', async (t) => {
  const cases: Array<[string, string, RegExp]> = [
    ['signed with another secret', signStudioToken({ sub: 'c' }, 'another-secret-0123456789abcdef01234567'), /bad signature/],
    [
      'claims changed after signing',
      (() => {
        const [header, , sig] = signStudioToken({ sub: 'c' }, SECRET).split('.')
        return `${header}.${Buffer.from(JSON.stringify({ sub: 'admin' })).toString('base64url')}.${sig}`
      })(),
      /bad signature/,
    ],
    [
      'alg none',
      `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from('{"sub":"c"}').toString('base64url')}.x`,
      /algorithm "none" is not HS256/,
    ],
    ['alg HS512', forged({ alg: 'HS512' }, { sub: 'c' }), /algorithm "HS512"/],
    ['expired', signStudioToken({ sub: 'c', exp: nowSeconds - 1 }, SECRET), /expired/],
    ['exp that is not a number', signStudioToken({ sub: 'c', exp: 'tomorrow' }, SECRET), /no exp/],
    ['no exp: valid forever otherwise', signStudioToken({ sub: 'c' }, SECRET), /no exp/],
    ['exp more than 24 hours ahead', signStudioToken({ sub: 'c', exp: nowSeconds + 24 * 3600 + 1 }, SECRET), /more than 24 hours ahead/],
    ['not valid yet', signStudioToken({ sub: 'c', exp: nowSeconds + 120, nbf: nowSeconds + 60 }, SECRET), /not valid yet/],
    ['two segments', 'abc.def', /not a compact JWT/],
    ['a truncated signature', signStudioToken({ sub: 'c' }, SECRET).slice(0, -4), /bad signature/],
    ['claims that are not an object', forged({ alg: 'HS256' }, ['c'] as unknown as Record<string, unknown>), /unreadable claims/],
  ]
  for (const [name, token, problem] of cases) {
    const verdict = verifyStudioToken(token, SECRET, NOW)
    t.equal(verdict.valid, false, name)
    t.match(verdict.valid ? '' : verdict.problem, problem, name)
  }
})
