/**
 * The engine killed (`kill -9`) in the middle of a request, behind a gateway in a process of its own
 * (docs/reference/consistency.md#what-a-failure-leaves): the client gets 502/504 from the gateway quickly, in the envelope;
 * once the engine has restarted on the same DATA_DIR the instance is in its state before the request
 * or after it, never between, and an upload cut off by the crash left no bytes behind.
 */
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { WorkflowClient } from '../../sdk/client.js'
import { openStore } from '../../store/open.js'
import type { StoredContext } from '../../store/collections.js'
import { Collections } from '../../store/collections.js'
import { type ChildService, spawnService } from '../../services/testing/child-service.js'
import { tempDir } from '../../services/testing/harness.js'
import { waitUntil } from '../../services/testing/wait.js'
import { createHrUsers, deployHrApp, HR } from '../../services/testing/workflow.js'
import { inconsistencies, REQUEST_STEP, requestCompleted } from './streams-consistency.js'
import { MULTIPART, sendRawBody, UPLOAD_TAIL, uploadHead } from './streams-support.js'

/**
 * Starts the engine on `port`, or (0) on any free port, which it binds itself: a port found free
 * first and handed over afterwards may be taken in between by another test's socket. A restart
 * takes the port of the engine before it (the gateway's ENGINE_URL names it) and tries again while
 * another socket holds it (EADDRINUSE).
 */
async function startEngine(dataDir: string, port = 0): Promise<{ engine: ChildService; port: number }> {
  const attempt = async (): Promise<ChildService | Error> => {
    const engine = spawnService('engine/server', { DATA_DIR: dataDir, ENGINE_PORT: String(port) }, 1)
    return engine.ready.then(
      () => engine,
      (error: Error) => error,
    )
  }
  const started = await waitUntil(
    attempt,
    (outcome) => !(outcome instanceof Error && port !== 0 && outcome.message.includes('EADDRINUSE')),
    QUICK_MS,
    100,
  )
  if (started instanceof Error) throw started
  const url = (await started.ready)['workflow-engine']!
  return { engine: started, port: Number(new URL(url).port) }
}

/** Resolves once the engine has logged the arrival of a request to `url` (its headers; the body may still be on its way). */
async function requestArrived(engine: ChildService, url: string): Promise<void> {
  const arrived = await waitUntil(
    () => engine.stdoutLines.some((line) => line.includes(`"url":"${url}"`) && line.includes('incoming request')),
    (seen) => seen,
    QUICK_MS,
    5,
  )
  if (!arrived) throw new Error(`the engine did not log a request to ${url}`)
}

/** "Quickly": the gateway notices the engine's connection closing at once; the bound is generous for loaded machines. */
const QUICK_MS = 10_000

t.test(
  'an engine killed mid-request: the client gets 502/504 quickly, and after the restart the instance is before or after, never between',
  { timeout: 300_000 },
  async (t) => {
    const engineDir = tempDir(t, 'streams-engine-')
    const seed = await openStore({ dataDir: engineDir })
    await deployHrApp(seed)
    const { employee } = await createHrUsers(seed)
    await seed.close()

    const first = await startEngine(engineDir)
    const port = first.port
    let engine = first.engine
    t.teardown(() => void engine.child.kill('SIGKILL'))
    const gatewayProcess = spawnService(
      'gateway/server',
      // Proxied routes only: the engine checks the users, so the gateway may keep a store of its own.
      { DATA_DIR: tempDir(t, 'streams-gateway-'), ALLOW_GATEWAY_EMBEDDED_STORE: 'true', ENGINE_URL: `http://127.0.0.1:${port}` },
      1,
    )
    t.teardown(() => void gatewayProcess.child.kill('SIGKILL'))
    const gateway = (await gatewayProcess.ready)['workflow-gateway']!
    const client = new WorkflowClient({ baseUrl: gateway, ...HR, userId: employee.userId })

    const instances: string[] = []
    // Killed at two moments tied to the request's progress, not to the machine's speed: as soon as it is sent, and once the engine has it.
    const killMoments = [
      { when: 'as soon as it was sent', reached: async (): Promise<void> => undefined },
      { when: 'once the engine had it', reached: () => requestArrived(engine, '/action/complete') },
    ]
    for (const { when, reached } of killMoments) {
      const started = await client.post('/context', { body: { processId: 'leave-request', input: { days: 2, reason: 'engine kill' } } })
      const instance = started.context.processInstance
      instances.push(instance.processInstanceId)
      const before = Date.now()
      const answer = fetch(`${gateway}/action/complete`, {
        method: 'POST',
        headers: { user: employee.userId, 'content-type': 'application/json' },
        body: JSON.stringify({
          ...HR,
          processId: 'leave-request',
          processInstanceId: instance.processInstanceId,
          businessKey: instance.businessKey,
          taskId: started.formContext.task!.taskId,
          actionType: 'complete',
          dataInstance: { ...started.context.dataInstance, days: 2, reason: 'engine kill' },
        }),
      }).then(async (response) => ({
        status: response.status,
        body: (await response.json()) as { status: string; error?: { code: string } },
        ms: Date.now() - before,
      }))
      await reached()
      engine.child.kill('SIGKILL')
      const { status, body, ms } = await answer
      if (status === 200) t.pass(`killed ${when}: the completion had already been answered`)
      else {
        t.ok(status === 502 || status === 504, `killed ${when}: ${status} ${body.error?.code}`)
        t.equal(body.status, 'error', 'in the envelope')
        t.ok(ms < QUICK_MS, `answered in ${ms} ms`)
      }
      await engine.exited
      ;({ engine } = await startEngine(engineDir, port))
      const status2 = await client.get('/process/{processInstanceId}', {
        params: { path: { processInstanceId: instance.processInstanceId } },
      })
      const openSteps = status2.tasks.map((task) => task.stepId)
      const stillBefore = openSteps.includes(REQUEST_STEP)
      t.ok(
        stillBefore ? status !== 200 : true,
        `after the restart the instance is ${stillBefore ? 'as before the request' : 'as after it'} (${openSteps.join(', ')})`,
      )
    }

    // An upload whose body is still arriving when the engine dies.
    const started = await client.post('/context', { body: { processId: 'leave-request', input: { days: 2, reason: 'upload cut' } } })
    const instance = started.context.processInstance
    instances.push(instance.processInstanceId)
    const fields = {
      processId: instance.processId,
      processInstanceId: instance.processInstanceId,
      businessKey: instance.businessKey,
      taskDefinitionKey: REQUEST_STEP,
      taskId: started.formContext.task!.taskId,
      label: 'Scan',
      fileName: 'scan.pdf',
    }
    const sentAt = Date.now()
    const upload = sendRawBody({
      url: `${gateway}/file/upload`,
      headers: { user: employee.userId, 'content-type': MULTIPART },
      head: uploadHead(JSON.stringify(fields)),
      fillerBytes: 4 * 1024 * 1024,
      tail: UPLOAD_TAIL,
      chunkDelayMs: 20,
    })
    // Killed once the engine has the upload, while its body is still arriving (a chunk every 20 ms).
    await requestArrived(engine, '/file/upload')
    engine.child.kill('SIGKILL')
    const sentBeforeKillMs = Date.now() - sentAt
    const cut = await upload
    t.ok(cut.status === 502 || cut.status === 504, `the cut upload is answered ${cut.status} ${JSON.stringify(cut.body ?? cut.error)}`)
    t.ok(cut.ms - sentBeforeKillMs < QUICK_MS, `in ${cut.ms - sentBeforeKillMs} ms after the kill`)
    await engine.exited
    ;({ engine } = await startEngine(engineDir, port))
    const afterUpload = await client.get('/process/{processInstanceId}', {
      params: { path: { processInstanceId: instance.processInstanceId } },
    })
    t.ok(
      afterUpload.tasks.some((task) => task.stepId === REQUEST_STEP),
      'the instance is as before the upload',
    )

    // The restart cleared what the killed engine was writing (its temp file); nothing else may be there.
    engine.child.kill('SIGKILL')
    await engine.exited
    t.same(readdirSync(join(engineDir, 'files')), [], 'no bytes of the cut upload are kept')
    const store = await openStore({ dataDir: engineDir })
    t.teardown(() => store.close())
    const problems: string[] = []
    for (const id of instances) problems.push(...(await inconsistencies(store, id)))
    t.same(problems, [], `each of the ${instances.length} instances agrees with its activities and its notification`)
    const uploaded = await store.collection<StoredContext>(Collections.contexts).findOne({ _id: instance.processInstanceId })
    t.same(uploaded?.processInstance.files, [], 'the cut upload added no file')
    t.notOk(uploaded && requestCompleted(uploaded), 'and completed nothing')
  },
)
