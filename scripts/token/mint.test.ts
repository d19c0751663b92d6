import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { decodeProtectedHeader, jwtVerify } from 'jose'
import t from 'tap'
import { mintToken, tokenRequestOf } from './mint.js'

const SECRET = 'a-development-secret-of-more-than-32-characters'
const NOW = new Date('2026-01-05T09:00:00.000Z')
const NOW_SECONDS = NOW.getTime() / 1000
const MINT = join(import.meta.dirname, 'mint.js')

async function verified(token: string, secret = SECRET) {
  return (await jwtVerify(token, new TextEncoder().encode(secret), { currentDate: NOW, algorithms: ['HS256'] })).payload
}

t.test('a minted token is HS256 with the JWT_SECRET, names the user in sub, iat now and exp one hour ahead by default', async (t) => {
  const token = await mintToken(tokenRequestOf(['user-7'], { JWT_SECRET: SECRET }, NOW))
  t.same(decodeProtectedHeader(token), { alg: 'HS256', typ: 'JWT' })
  t.same(await verified(token), { sub: 'user-7', iat: NOW_SECONDS, exp: NOW_SECONDS + 3_600 })
  await t.rejects(verified(token, 'another-secret-of-more-than-32-characters!'), 'another secret does not verify it')
})

t.test('JWT_USER_CLAIM, JWT_ISSUER and JWT_AUDIENCE shape the token as the service then checks it; --expires sets exp', async (t) => {
  const env = { JWT_SECRET: SECRET, JWT_USER_CLAIM: 'preferred_username', JWT_ISSUER: 'https://id.example/', JWT_AUDIENCE: 'workflow' }
  const token = await mintToken(tokenRequestOf(['ada', '--expires', '30m'], env, NOW))
  t.same(await verified(token), {
    preferred_username: 'ada',
    iss: 'https://id.example/',
    aud: 'workflow',
    iat: NOW_SECONDS,
    exp: NOW_SECONDS + 1_800,
  })
  t.equal((await verified(await mintToken(tokenRequestOf(['ada', '--expires', '24h'], env, NOW)))).exp, NOW_SECONDS + 86_400)
})

t.test('it refuses without JWT_SECRET, without exactly one userId, with an unknown option or an expiry over 24 h', async (t) => {
  t.throws(() => tokenRequestOf(['u'], {}, NOW), /JWT_SECRET is not set/)
  t.throws(() => tokenRequestOf(['u'], { JWT_SECRET: '   ' }, NOW), /JWT_SECRET is not set/)
  t.throws(() => tokenRequestOf([], { JWT_SECRET: SECRET }, NOW), /exactly one userId/)
  t.throws(() => tokenRequestOf(['u', 'v'], { JWT_SECRET: SECRET }, NOW), /exactly one userId/)
  t.throws(() => tokenRequestOf(['u', '--admin'], { JWT_SECRET: SECRET }, NOW), /unknown option --admin/)
  for (const expires of ['25h', '0m', 'soon', ''])
    t.throws(() => tokenRequestOf(['u', '--expires', expires], { JWT_SECRET: SECRET }, NOW), /--expires must be/, expires)
})

t.test('the command prints the token alone on stdout, and exits 1 with the reason when JWT_SECRET is missing', async (t) => {
  const run = promisify(execFile)
  const { stdout } = await run(process.execPath, [MINT, 'user-7'], { env: { JWT_SECRET: SECRET } })
  t.match(stdout, /^[\w-]+\.[\w-]+\.[\w-]+\n$/)
  t.equal((await jwtVerify(stdout.trim(), new TextEncoder().encode(SECRET))).payload.sub, 'user-7', 'valid now')
  const refused = await run(process.execPath, [MINT, 'user-7'], { env: {} }).then(
    () => undefined,
    (error: { code: number; stderr: string; stdout: string }) => error,
  )
  t.match(refused, { code: 1, stdout: '', stderr: /JWT_SECRET is not set/ })
})
