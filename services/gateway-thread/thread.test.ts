import t from 'tap'
import { openTestStore, testConfig } from '../testing/harness.js'
import { startGatewayThread } from './thread.js'

const misbehaving = new URL('./fixtures/misbehaving-worker.js', import.meta.url)

function capturedStdout(): { write(chunk: string): void; text: string } {
  return {
    text: '',
    write(chunk) {
      this.text += chunk
    },
  }
}

t.test('a gateway thread that cannot start rejects with its error', async (t) => {
  const store = await openTestStore(t)
  const starting = startGatewayThread({
    config: testConfig({ deploymentEnv: 'fail-to-start' }),
    store,
    stdout: capturedStdout(),
    workerUrl: misbehaving,
  })
  await t.rejects(starting, { message: /EADDRINUSE/ })
})

t.test('a gateway thread that dies is reported once, with its error; its lines reached stdout', async (t) => {
  const store = await openTestStore(t)
  const stdout = capturedStdout()
  const thread = await startGatewayThread({ config: testConfig(), store, stdout, workerUrl: misbehaving })
  const reasons: Error[] = []
  await new Promise<void>((resolve) =>
    thread.onUnexpectedExit((reason) => {
      reasons.push(reason)
      resolve()
    }),
  )
  t.match(reasons, [{ message: 'the gateway broke' }])
  t.equal(stdout.text, '{"msg":"a relayed line"}\n')
  await thread.close()
  t.equal(reasons.length, 1, 'closing the dead thread reports nothing more')
  t.equal(await store.collection('users').countDocuments(), 0, "the store is still the main thread's, open")
})
