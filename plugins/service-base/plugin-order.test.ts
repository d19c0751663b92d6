import Fastify, { type FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import t from 'tap'
import { declarationOf, listed, orderByDependencies, PluginOrderError, registerInDependencyOrder } from './plugin-order.js'

const plugin = (name: string, ...dependencies: string[]) => ({ name, dependencies })
const names = (plugins: ReadonlyArray<{ name: string }>) => plugins.map(({ name }) => name)

t.test('a list already in dependency order is kept as written', async (t) => {
  const plugins = [plugin('store'), plugin('models', 'store'), plugin('health'), plugin('model-routes', 'models')]
  t.same(names(orderByDependencies(plugins)), ['store', 'models', 'health', 'model-routes'])
})

t.test('a plugin moves after what it depends on; the others keep the order of the list', async (t) => {
  const plugins = [plugin('routes', 'service'), plugin('a'), plugin('service', 'repository'), plugin('b'), plugin('repository')]
  t.same(names(orderByDependencies(plugins)), ['a', 'b', 'repository', 'service', 'routes'])
})

t.test('a dependency registered before (service-base) need not be listed', async (t) => {
  const plugins = [plugin('routes', 'identity', 'service'), plugin('service', 'errors')]
  const registered = new Set(['identity', 'errors'])
  t.same(names(orderByDependencies(plugins, (name) => registered.has(name))), ['service', 'routes'])
})

t.test('a dependency neither listed nor registered is an error naming both plugins', async (t) => {
  t.throws(() => orderByDependencies([plugin('routes', 'service')]), {
    name: 'PluginOrderError',
    message: "plugin 'routes' depends on 'service', which is neither listed nor registered",
  })
})

t.test('a cycle is an error naming the plugins in it, each needing the next', async (t) => {
  const plugins = [plugin('first'), plugin('a', 'first', 'c'), plugin('b', 'a'), plugin('c', 'b'), plugin('after', 'a')]
  t.throws(() => orderByDependencies(plugins), { message: 'plugins depend on each other in a cycle: a → c → b → a' })
  t.throws(() => orderByDependencies([plugin('self', 'self')]), { message: 'plugins depend on each other in a cycle: self → self' })
})

t.test('a name listed twice is an error', async (t) => {
  t.throws(() => orderByDependencies([plugin('a'), plugin('a')]), new PluginOrderError("plugin 'a' is listed twice"))
})

t.test('the declaration is read from fastify-plugin, which a plugin must be wrapped in with a name', async (t) => {
  const declared = fp(async () => {}, { name: 'models', dependencies: ['store'] })
  t.same(declarationOf(declared), { name: 'models', dependencies: ['store'] })
  t.same(declarationOf(fp(async () => {}, { name: 'health' })), { name: 'health', dependencies: [] })
  const message = /declares no name: wrap it in fastify-plugin/
  t.throws(() => declarationOf(async () => {}), { message })
  t.throws(() => declarationOf(fp(async function unnamed() {})), { message }, 'the name fastify-plugin makes up is no name')
  t.throws(() => listed(async function routes() {}), { message: /^the plugin function routes declares no name/ })
})

t.test('the app registers them in dependency order with their options, after those it has', async (t) => {
  const app: FastifyInstance = Fastify()
  t.teardown(() => app.close())
  const registered: string[] = []
  await app.register(fp(async () => void registered.push('base'), { name: 'base' }))
  const greeting = fp(
    async (_app: FastifyInstance, options: { word: string }) => {
      registered.push(`greeting ${options.word}`)
    },
    { name: 'greeting', dependencies: ['base'] },
  )
  const routes = fp(async () => void registered.push('routes'), { name: 'routes', dependencies: ['greeting'] })
  await registerInDependencyOrder(app, [listed(routes), listed(greeting, { word: 'hello' })])
  await app.ready()
  t.same(registered, ['base', 'greeting hello', 'routes'])
})
