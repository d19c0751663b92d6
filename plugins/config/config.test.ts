import t from 'tap'
import { parseConfig } from './config.js'

t.test('defaults follow DESIGN.md §2 when nothing is set', async (t) => {
  const config = parseConfig({}, '/srv/app')
  t.same(config, {
    gatewayPort: 3000,
    enginePort: 3001,
    host: '127.0.0.1',
    engineUrl: 'http://127.0.0.1:3001',
    dataDir: '/srv/app/.data',
    mongodbUri: undefined,
    logLevel: 'info',
    development: false,
  })
})

t.test('ENGINE_URL defaults to the configured engine port', async (t) => {
  t.equal(parseConfig({ ENGINE_PORT: '4100' }).engineUrl, 'http://127.0.0.1:4100')
  t.equal(parseConfig({ ENGINE_URL: 'http://engine.internal:80/' }).engineUrl, 'http://engine.internal:80')
})

t.test('MONGODB_URI selects MongoDB and is kept as given', async (t) => {
  t.equal(parseConfig({ MONGODB_URI: 'mongodb://db:27017/wf?replicaSet=rs0' }).mongodbUri, 'mongodb://db:27017/wf?replicaSet=rs0')
})

t.test('a bad value is rejected with a message naming the variable', async (t) => {
  const cases: Array<[Record<string, string>, string]> = [
    [{ GATEWAY_PORT: 'eighty' }, 'Invalid configuration: GATEWAY_PORT must be a port number from 0 to 65535, got "eighty"'],
    [{ ENGINE_PORT: '70000' }, 'Invalid configuration: ENGINE_PORT must be a port number from 0 to 65535, got "70000"'],
    [{ ENGINE_URL: 'not a url' }, 'Invalid configuration: ENGINE_URL must be a URL, got "not a url"'],
    [{ ENGINE_URL: 'ftp://engine' }, 'Invalid configuration: ENGINE_URL must use http: or https:, got "ftp:"'],
    [{ MONGODB_URI: 'postgres://db' }, 'Invalid configuration: MONGODB_URI must use mongodb: or mongodb+srv:, got "postgres:"'],
    [{ LOG_LEVEL: 'loud' }, 'Invalid configuration: LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "loud"'],
  ]
  for (const [env, message] of cases) {
    const variable = Object.keys(env)[0]!
    t.throws(() => parseConfig(env), { name: 'ConfigError', variable, message }, `${variable} is named`)
  }
})

t.test('NODE_ENV=development turns on development mode', async (t) => {
  t.equal(parseConfig({ NODE_ENV: 'development' }).development, true)
  t.equal(parseConfig({ NODE_ENV: 'production' }).development, false)
})
