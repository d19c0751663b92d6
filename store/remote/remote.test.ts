import { MessageChannel, Worker } from 'node:worker_threads'
import t from 'tap'
import { openTestStore, tempDir } from '../../services/testing/harness.js'
import { openStore } from '../open.js'
import { RemoteStore } from './client.js'
import { runScenario } from './fixtures/scenario.js'
import { serveStore } from './host.js'

const scenarioWorker = new URL('./fixtures/scenario-worker.js', import.meta.url)

t.test(
  'a remote store in a Worker gives the same results and errors as the embedded store it fronts, atomic batches included',
  async (t) => {
    const direct = await runScenario(await openTestStore(t))

    const store = await openStore({ dataDir: tempDir(t) })
    const channel = new MessageChannel()
    const host = serveStore(store, channel.port1)
    const worker = new Worker(scenarioWorker, { workerData: { port: channel.port2, kind: store.kind }, transferList: [channel.port2] })
    const [remote] = await Promise.all([
      new Promise((resolve, reject) => worker.once('message', resolve).once('error', reject)),
      new Promise((resolve) => worker.once('exit', resolve)),
    ])
    await host.close()
    await store.close()

    t.same(remote, direct)
    t.match(
      direct,
      {
        duplicate: {
          rejected: {
            name: 'MongoServerError',
            code: 11000,
            keyValue: { email: 'one@example.com' },
            message: /^E11000 duplicate key error/,
          },
        },
        immutableId: { rejected: { code: 66 } },
        withoutOperators: { rejected: { message: String } },
        dateIsDate: true,
        atomic: { resolved: [{ matchedCount: 1, modifiedCount: 1 }, { insertedId: 'o1' }] },
        atomicLost: { rejected: { name: 'UnmatchedWriteError' } },
        atomicDuplicate: { rejected: { code: 11000 } },
        afterAtomic: { orders: [{ _id: 'o1', user: 'u1' }], u1: { _id: 'u1', n: 1 } },
        file: { text: 'hello files', size: 11 },
      },
      'the scenario covers the shapes callers check',
    )
  },
)

t.test('calls under way when the host goes away reject instead of hanging', async (t) => {
  const store = await openTestStore(t)
  const channel = new MessageChannel()
  const client = new RemoteStore(channel.port2, store.kind)
  // No host on port1: the call waits for an answer that never comes, until the channel closes.
  const pending = client.collection('users').findOne({})
  channel.port1.close()
  await t.rejects(pending, /closed the connection/)
  await t.rejects(client.collection('users').findOne({}), /closed/, 'and later calls fail at once')
})
