/**
 * deploy/compose.yaml and the Dockerfile cannot run here (no container runtime in the test
 * environment); what can be checked without one is checked: the compose file's services start
 * built entry points the Dockerfile produces, with configuration the services accept and the README
 * documents.
 */
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { parse } from 'yaml'
import { parseConfig } from '../../lib/config/config.js'
import { repoRoot } from '../../lib/server/paths.js'

interface ComposeService {
  image?: string
  build?: string
  command?: string[]
  environment?: Record<string, string>
}

const compose = parse(readFileSync(join(repoRoot, 'deploy', 'compose.yaml'), 'utf8'), { merge: true }) as {
  services: Record<string, ComposeService>
}
const { mongo, engine, gateway } = compose.services

/** `${NAME:?message}` as compose fills it in from the caller's environment. */
function interpolated(environment: Record<string, string>, values: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(environment).map(([key, value]) => [
      key,
      value.replace(/\$\{([A-Z_]+)(:\?[^}]*)?\}/g, (_, name: string) => values[name] ?? ''),
    ]),
  )
}

const SECRETS = { JWT_SECRET: 'compose-test-secret-0123456789abcdef0123', ADMIN_TOKEN: 'compose-test-admin-token' }

t.test("the compose file runs a gateway and an engine from the repository's image on a MongoDB replica set", async (t) => {
  t.ok(mongo?.image?.startsWith('mongo:'), 'a MongoDB service')
  for (const [name, service] of [
    ['engine', engine],
    ['gateway', gateway],
  ] as const) {
    t.equal(service?.build, '..', `${name} is built from the repository's Dockerfile`)
    const entry = service?.command?.[1] ?? ''
    t.match(entry, /^dist\/services\/.+\.js$/, `${name} starts a built entry point`)
    t.ok(existsSync(join(repoRoot, entry)), `${entry} is what the build produces`)
    t.ok(readFileSync(join(repoRoot, 'Dockerfile'), 'utf8').includes('npx tsc -p .'), 'the image builds dist/')
  }
  t.match(engine?.environment?.MONGODB_URI, /replicaSet=/, "MongoDB as a replica set: a request's writes commit in one transaction")
  t.equal(
    gateway?.environment?.ENGINE_URL,
    `http://engine:${engine?.environment?.ENGINE_PORT}`,
    'the gateway finds the engine by its service name and port',
  )
})

t.test('every variable the compose file sets is one the services accept and the README documents', async (t) => {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8')
  for (const [name, service] of [
    ['engine', engine],
    ['gateway', gateway],
  ] as const) {
    const environment = interpolated(service?.environment ?? {}, SECRETS)
    for (const variable of Object.keys(environment))
      t.ok(
        readme.includes(`| \`${variable}\``) || readme.includes(`/ \`${variable}\``),
        `${name}: ${variable} is in the README's Configuration table`,
      )
    const config = parseConfig(environment)
    t.equal(config.auth.mode, 'jwt', `${name} starts in jwt mode`)
  }
})
