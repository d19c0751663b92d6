/**
 * deploy/compose.yaml without a container runtime: its shape and its configuration are checked here;
 * tests/deploy/image-build.test.ts starts each service's command from the image the Dockerfile builds.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { parseConfig } from '../../lib/config/config.js'
import { repoRoot } from '../../lib/server/paths.js'
import { composeEnvironment, readCompose } from './compose.js'

const { mongo, engine, gateway } = readCompose()

t.test("the compose file runs a gateway and an engine from the repository's image on a MongoDB replica set", async (t) => {
  t.ok(mongo?.image?.startsWith('mongo:'), 'a MongoDB service')
  for (const [name, service] of [
    ['engine', engine],
    ['gateway', gateway],
  ] as const) {
    t.equal(service?.build, '..', `${name} is built from the repository's Dockerfile`)
    t.match(service?.command, ['node', /^dist\/services\/.+\.js$/], `${name} starts a built entry point`)
  }
  t.match(engine?.environment?.MONGODB_URI, /replicaSet=/, "MongoDB as a replica set: a request's writes commit in one transaction")
  t.equal(
    gateway?.environment?.ENGINE_URL,
    `http://engine:${engine?.environment?.ENGINE_PORT}`,
    'the gateway finds the engine by its service name and port',
  )
})

/** The names of the variables parseConfig reads from `env` (every variable the services take goes through it). */
function variablesRead(env: Record<string, string>): Set<string> {
  const read = new Set<string>()
  const recording = new Proxy(env, {
    get: (target, name) => {
      if (typeof name === 'string') read.add(name)
      return Reflect.get(target, name) as unknown
    },
  })
  parseConfig(recording)
  return read
}

t.test('every variable the compose file sets is one the services read and the README documents', async (t) => {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8')
  for (const [name, service] of [
    ['engine', engine],
    ['gateway', gateway],
  ] as const) {
    const environment = composeEnvironment(service ?? {})
    const read = variablesRead(environment)
    for (const variable of Object.keys(environment)) {
      t.ok(read.has(variable), `${name}: the services read ${variable}`)
      t.ok(
        readme.includes(`| \`${variable}\``) || readme.includes(`/ \`${variable}\``),
        `${name}: ${variable} is in the README's Configuration table`,
      )
    }
    t.equal(parseConfig(environment).auth.mode, 'jwt', `${name} starts in jwt mode`)
  }
})

t.test('a variable the services do not read is told apart from one they do', async (t) => {
  const read = variablesRead({ ENGINE_PORT: '3001', ENGINE_PROT: '3001' })
  t.ok(read.has('ENGINE_PORT'))
  t.notOk(read.has('ENGINE_PROT'), 'a misspelt name is not read')
})
