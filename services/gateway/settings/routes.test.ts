import { runInNewContext } from 'node:vm'
import t from 'tap'
import { ContractChecker } from '../../testing/contract.js'
import { type Envelope, startGateway } from '../../testing/gateway.js'
import { insertModelRequest } from '../../testing/models.js'

const HR = { appId: 'hr', organizationId: 'acme' }
const contract = new ContractChecker('gateway')

/** Runs the answered script as a browser would and gives back what it assigned. */
function assigned(script: string): Record<string, unknown> {
  const window: { __WORKFLOW_SETTINGS__?: Record<string, unknown> } = { __WORKFLOW_SETTINGS__: { earlier: true } }
  runInNewContext(script, { window })
  return window.__WORKFLOW_SETTINGS__ ?? {}
}

function settingsOf(referer: string, file = 'app') {
  return { file, referer }
}

t.test('GET /settings/:file finds the app from the referer in its three documented ways', async (t) => {
  const { gateway, client } = await startGateway(t)
  await client.call('insertModel', 'POST', '/model/insertModel', { body: insertModelRequest('hr-settings', HR) })
  await client.call('insertModel', 'POST', '/model/insertModel', { body: insertModelRequest('hr-lib', HR) })
  await client.call('insertModel', 'POST', '/model/insertModel', { body: insertModelRequest('purchase', HR) })
  const q = Buffer.from('hr|purchase|pi-1').toString('base64url')
  const referers = [
    settingsOf('https://portal.example.org/page?appId=hr'),
    settingsOf('https://portal.example.org/page?processId=purchase'),
    settingsOf(`https://portal.example.org/page?q=${q}`),
  ]
  for (const { file, referer } of referers) {
    const answer = await fetch(`${gateway.url}/settings/${file}`, { headers: { referer } })
    t.equal(answer.status, 200, referer)
    t.equal(answer.headers.get('content-type'), 'application/javascript; charset=UTF-8')
    const script = await answer.text()
    t.match(script, /^window\.__WORKFLOW_SETTINGS__ = window\.__WORKFLOW_SETTINGS__ \|\| \{\}; window\.__WORKFLOW_SETTINGS__\["app"\] = /)
    t.same(
      assigned(script),
      { earlier: true, app: { title: 'HR portal', theme: 'light' } },
      'the script assigns the file and keeps what was there',
    )
  }
})

t.test('a </script> or U+2028 inside a value cannot break out of the script', async (t) => {
  const { gateway, client } = await startGateway(t)
  const hostile = { title: '</script><script>alert(1)</script>', line: 'a\u2028b\u2029c', quote: '"]; alert(2); //' }
  await client.call('insertModel', 'POST', '/model/insertModel', {
    body: insertModelRequest('hr-settings', { ...HR, edit: (body) => void ((body.files as Record<string, unknown>).app = hostile) }),
  })
  const script = await (await fetch(`${gateway.url}/settings/app`, { headers: { referer: 'https://x.example/?appId=hr' } })).text()
  t.notMatch(script, /<\/script/i, 'no closing tag in the source')
  t.notMatch(script, /[\u2028\u2029]/, 'no raw line separators')
  t.same(assigned(script).app, hostile, 'the values arrive intact')
})

t.test('an unresolved app, an unknown file, or an app without settings is 404 fm3027', async (t) => {
  const { gateway, client } = await startGateway(t)
  await client.call('insertModel', 'POST', '/model/insertModel', { body: insertModelRequest('hr-settings', HR) })
  const cases: Array<[string, Record<string, string>]> = [
    ['no referer', {}],
    ['a referer without app hints', { referer: 'https://x.example/page?x=1' }],
    ['an unknown processId', { referer: 'https://x.example/?processId=nothing' }],
    ['a q that is not a composite id', { referer: `https://x.example/?q=${Buffer.from('hr').toString('base64url')}` }],
    ['an app without settings', { referer: 'https://x.example/?appId=finance' }],
    ['a referer that is not a URL', { referer: 'not a url' }],
  ]
  for (const [name, headers] of cases) {
    const answer = await fetch(`${gateway.url}/settings/app`, { headers })
    const body = (await answer.json()) as Envelope<null>
    t.equal(answer.status, 404, name)
    t.equal(body.error?.code, 'fm3027', name)
    t.same(contract.errors('getSettingsFile', 404, body), [], name)
  }
  const unknownFile = await fetch(`${gateway.url}/settings/nothing`, { headers: { referer: 'https://x.example/?appId=hr' } })
  t.equal(unknownFile.status, 404)
  t.equal(
    (await fetch(`${gateway.url}/settings/bad.file`, { headers: { referer: 'https://x.example/?appId=hr' } })).status,
    400,
    'the file id pattern is checked',
  )
})

t.test('a new settings version is served at once by the gateway that stored it', async (t) => {
  const { gateway, client } = await startGateway(t)
  await client.call('insertModel', 'POST', '/model/insertModel', { body: insertModelRequest('hr-settings', HR) })
  const read = async () =>
    assigned(await (await fetch(`${gateway.url}/settings/app`, { headers: { referer: 'https://x.example/?appId=hr' } })).text()).app
  t.same(await read(), { title: 'HR portal', theme: 'light' })
  await client.call('insertModel', 'POST', '/model/insertModel', {
    body: insertModelRequest('hr-settings', {
      ...HR,
      edit: (body) => void ((body.files as Record<string, unknown>).app = { title: 'v2' }),
    }),
  })
  t.same(await read(), { title: 'v2' })
})
