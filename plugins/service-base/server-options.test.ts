import Fastify from 'fastify'
import pino from 'pino'
import t from 'tap'
import { serverOptions } from './server-options.js'

t.test('a start is never cut short by a plugin timeout: an index built over a long history takes minutes', async (t) => {
  const options = serverOptions(pino({ level: 'silent' }))
  t.equal(options.pluginTimeout, 0)
  const app = Fastify(options)
  t.teardown(() => app.close())
  app.register(async () => undefined)
  await app.ready()
  t.equal(app.initialConfig.pluginTimeout, 0, 'Fastify took the setting')
})
