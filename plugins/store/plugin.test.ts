/** The Fastify plugin: configuration or a shared store in, `fastify.store` out, closed only by its owner. */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Fastify from 'fastify'
import t from 'tap'
import { EmbeddedStore } from '../../store/embedded/store.js'
import storePlugin from './plugin.js'

function tempDataDir(t: { teardown(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'store-plugin-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

t.test('opens the store from configuration and closes it with the app', async (t) => {
  const dataDir = tempDataDir(t)
  const app = Fastify()
  await app.register(storePlugin, { dataDir: join(dataDir, 'created-if-missing') })
  await app.ready()
  t.equal(app.store.kind, 'embedded')
  await app.store.collection('things').insertOne({ _id: 'x' })
  await app.close()

  const reopened = EmbeddedStore.open({ dataDir: join(dataDir, 'created-if-missing') })
  t.same(await reopened.collection('things').findOne({ _id: 'x' }), { _id: 'x' }, 'closed (lock released) and durable')
  await reopened.close()
})

t.test('shares an open store between apps without closing it', async (t) => {
  const store = EmbeddedStore.open({ dataDir: tempDataDir(t) })
  t.teardown(() => store.close())
  const gateway = Fastify()
  const engine = Fastify()
  await gateway.register(storePlugin, { store })
  await engine.register(storePlugin, { store })
  await Promise.all([gateway.ready(), engine.ready()])
  t.equal(gateway.store, engine.store)
  await gateway.close()
  await engine.close()
  t.equal(await store.collection('things').countDocuments(), 0, 'the shared store is still open')
})

t.test('is a named plugin others can depend on', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(storePlugin, { dataDir: tempDataDir(t) })
  await app.register(async (child) => {
    t.ok(child.store, 'visible to sibling plugins (not encapsulated)')
  })
  await app.ready()
  t.ok(app.hasPlugin('store'))
})
