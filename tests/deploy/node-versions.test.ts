/**
 * The Node.js versions the service says it runs on (package.json's `engines`, the Dockerfile's base
 * images, the SDK's `engines`) are versions every installed package says it runs on. npm only warns
 * when a package asks for a newer Node.js (EBADENGINE); an upgrade once brought in a
 * content-disposition that asked for Node.js 22 through @fastify/static 10.1.4.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import semver from 'semver'
import t from 'tap'
import { repoRoot } from '../../lib/server/paths.js'
import { parseDockerfile } from './dockerfile.js'

interface Manifest {
  engines?: { node?: string }
}
interface LockFile {
  packages: Record<string, Manifest & { version?: string }>
}

const readJson = <T>(path: string): T => JSON.parse(readFileSync(join(repoRoot, path), 'utf8')) as T
const serviceRange = readJson<Manifest>('package.json').engines?.node
const lock = readJson<LockFile>('package-lock.json')

/** The installed packages (path in node_modules, version) whose `engines.node` leaves out `version`. */
function packagesRefusing(version: string): string[] {
  return Object.entries(lock.packages)
    .filter(([path, manifest]) => path !== '' && manifest.engines?.node !== undefined)
    .filter(([, manifest]) => !semver.satisfies(version, manifest.engines!.node!))
    .map(([path, manifest]) => `${path}@${manifest.version} asks for Node.js ${manifest.engines!.node}`)
}

t.test('every installed package runs on the oldest Node.js the service says it runs on', async (t) => {
  t.ok(serviceRange, "package.json's engines name a Node.js range")
  const oldest = semver.minVersion(serviceRange!)
  t.ok(oldest, `${serviceRange} has a lowest version`)
  t.same(packagesRefusing(oldest!.version), [], `no package leaves out Node.js ${oldest!.version}`)
})

t.test('the SDK asks for the same Node.js as the service', async (t) => {
  t.equal(readJson<Manifest>('sdk/package.json').engines?.node, serviceRange)
})

t.test("the image's base images are a Node.js line the service runs on", async (t) => {
  const stages = parseDockerfile(readFileSync(join(repoRoot, 'Dockerfile'), 'utf8'))
  t.ok(stages.length > 0, 'the Dockerfile has stages')
  for (const stage of stages) {
    const major = /^node:(\d+)(?:[-.]|$)/.exec(stage.image)?.[1]
    t.ok(major, `${stage.image} names a Node.js major version`)
    // A floating tag such as node:20-bookworm-slim is the newest 20.x: it must be in the range.
    const newest = `${major}.999.999`
    t.ok(semver.satisfies(newest, serviceRange!), `${stage.image} (Node.js ${major}.x) is within ${serviceRange}`)
    t.same(packagesRefusing(newest), [], `every installed package runs on ${stage.image}`)
  }
})
