import { createServer } from 'node:net'
import t from 'tap'
import { spawnService } from './testing/child-service.js'
import { tempDir } from './testing/harness.js'

t.test('the all-in-one serves both services on one store and exits 0 on SIGTERM, releasing the data dir', async (t) => {
  const dataDir = tempDir(t)
  const first = spawnService('all-in-one', { DATA_DIR: dataDir })
  const urls = await first.ready
  t.equal((await fetch(`${urls['workflow-gateway']}/healthcheck`)).status, 200)
  t.equal((await fetch(`${urls['workflow-engine']}/liveness`)).status, 200)
  first.child.kill('SIGTERM')
  const { code } = await first.exited
  t.equal(code, 0, 'graceful shutdown exits 0')

  const second = spawnService('all-in-one', { DATA_DIR: dataDir })
  await second.ready
  second.child.kill('SIGINT')
  t.equal((await second.exited).code, 0, 'the data dir was released and SIGINT also exits 0')
})

t.test('a second process on the same DATA_DIR fails with a clear message', async (t) => {
  const dataDir = tempDir(t)
  const owner = spawnService('engine/server', { DATA_DIR: dataDir }, 1)
  await owner.ready
  const intruder = spawnService('engine/server', { DATA_DIR: dataDir }, 1)
  const { code, stderr } = await intruder.exited
  t.equal(code, 1)
  t.match(stderr, dataDir)
  t.match(stderr, /in use/)
  owner.child.kill('SIGTERM')
  t.equal((await owner.exited).code, 0)
})

t.test('a bad configuration value stops start-up with exit code 1 and names the variable', async (t) => {
  const { code, stderr } = await spawnService('all-in-one', { DATA_DIR: tempDir(t), GATEWAY_PORT: 'eighty' }).exited
  t.equal(code, 1)
  t.match(stderr, 'Invalid configuration: GATEWAY_PORT must be a port number')
})

for (const gateway of ['main', 'thread'] as const) {
  t.test(
    `a gateway on the ${gateway} thread that cannot listen stops the all-in-one with exit code 1, the data dir released`,
    async (t) => {
      const taken = createServer()
      await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
      t.teardown(() => void taken.close())
      const port = (taken.address() as { port: number }).port
      const dataDir = tempDir(t)
      const env = { DATA_DIR: dataDir, GATEWAY_PORT: String(port), ALL_IN_ONE_GATEWAY: gateway }
      const { code, stderr } = await spawnService('all-in-one', env).exited
      t.equal(code, 1)
      t.match(stderr, /Cannot start the gateway: .*EADDRINUSE/)
      const again = spawnService('engine/server', { DATA_DIR: dataDir }, 1)
      await again.ready
      again.child.kill('SIGTERM')
      t.equal((await again.exited).code, 0, 'the store was closed')
    },
  )
}

t.test('each service runs alone', async (t) => {
  for (const entry of ['engine/server', 'gateway/server'] as const) {
    const service = spawnService(entry, { DATA_DIR: tempDir(t), ALLOW_GATEWAY_EMBEDDED_STORE: 'true' }, 1)
    const urls = Object.values(await service.ready)
    t.equal((await fetch(`${urls[0]}/liveness`)).status, 200, `${entry} answers`)
    service.child.kill('SIGTERM')
    t.equal((await service.exited).code, 0)
  }
})

t.test(
  'a gateway alone without MONGODB_URI stops with exit 1 and a message naming MONGODB_URI, on the engine’s data dir or its own',
  async (t) => {
    const engineDir = tempDir(t)
    const engine = spawnService('engine/server', { DATA_DIR: engineDir }, 1)
    t.teardown(() => void engine.child.kill('SIGKILL'))
    await engine.ready
    for (const [where, dataDir] of [
      ['the engine’s data dir', engineDir],
      ['a data dir of its own', tempDir(t)],
    ] as const) {
      const { code, stderr } = await spawnService('gateway/server', { DATA_DIR: dataDir }, 1).exited
      t.equal(code, 1, `${where}: exit code 1`)
      t.match(stderr, /needs the store its engines use: set MONGODB_URI/, `${where}: the message says to use MONGODB_URI`)
      t.notMatch(stderr, /Cannot open the store/, `${where}: it stops before it opens a store`)
    }
    engine.child.kill('SIGTERM')
    t.equal((await engine.exited).code, 0, 'the engine was left alone')
  },
)

t.test('ALLOW_GATEWAY_EMBEDDED_STORE=true starts a gateway alone on an embedded store of its own', async (t) => {
  const gateway = spawnService('gateway/server', { DATA_DIR: tempDir(t), ALLOW_GATEWAY_EMBEDDED_STORE: 'true' }, 1)
  const urls = Object.values(await gateway.ready)
  t.equal((await fetch(`${urls[0]}/liveness`)).status, 200)
  gateway.child.kill('SIGTERM')
  t.equal((await gateway.exited).code, 0)
})
