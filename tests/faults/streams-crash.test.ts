/**
 * `kill -9` of the all-in-one under a write load, restarted at once on the same DATA_DIR, five
 * times over (docs/reference/consistency.md#what-a-failure-leaves): every restart starts (the data-dir lock died with the
 * killed process), every write the gateway answered 2xx is there afterwards, and every instance is
 * consistent — instance, activities and notification were committed together.
 */
import t from 'tap'
import { runLeaveRequest } from '../../scripts/examples/leave-request.js'
import { WorkflowClient } from '../../sdk/client.js'
import { openStore } from '../../store/open.js'
import type { StoredContext } from '../../store/collections.js'
import { Collections } from '../../store/collections.js'
import { type ChildService, spawnService } from '../../services/testing/child-service.js'
import { tempDir } from '../../services/testing/harness.js'
import { waitUntil } from '../../services/testing/wait.js'
import { inconsistencies, REQUEST_STEP, requestCompleted } from './streams-consistency.js'

const CYCLES = 5
const WORKERS = 4

interface Acknowledged {
  /** Instances whose start was answered 2xx. */
  started: Set<string>
  /** Instances whose request task's completion was answered 2xx. */
  completed: Set<string>
}

/** One client's write load: start a leave request, submit it, again, until `stop` — each write recorded once answered 2xx. */
async function writeLoad(client: WorkflowClient, acknowledged: Acknowledged, stop: { now: boolean }): Promise<void> {
  while (!stop.now) {
    try {
      const started = await client.post('/context', { body: { processId: 'leave-request', input: { days: 1, reason: 'crash test' } } })
      const instance = started.context.processInstance
      acknowledged.started.add(instance.processInstanceId)
      const task = started.formContext.task
      if (!task || task.stepId !== REQUEST_STEP) throw new Error(`no request task: ${JSON.stringify(started.formContext)}`)
      await client.post('/action/complete', {
        body: {
          processId: 'leave-request',
          processInstanceId: instance.processInstanceId,
          businessKey: instance.businessKey,
          taskId: task.taskId,
          actionType: 'complete',
          dataInstance: { ...started.context.dataInstance, days: 1, reason: 'crash test' },
        },
      })
      acknowledged.completed.add(instance.processInstanceId)
    } catch {
      // The process was killed under this request: its outcome is unknown, so nothing is recorded (and `stop` is set).
    }
  }
}

t.test(
  'kill -9 of the all-in-one under write load, restarted at once 5 times: each restart ' +
    'starts, every acknowledged write is kept, every instance consistent',
  { timeout: 600_000 },
  async (t) => {
    const dataDir = tempDir(t, 'streams-crash-')
    const acknowledged: Acknowledged = { started: new Set(), completed: new Set() }
    let service: ChildService = spawnService('all-in-one', { DATA_DIR: dataDir })
    t.teardown(() => void service.child.kill('SIGKILL'))
    let gateway = (await service.ready)['workflow-gateway']!
    const { employee } = await runLeaveRequest({ baseUrl: gateway })

    for (let cycle = 1; cycle <= CYCLES; cycle++) {
      const client = new WorkflowClient({ baseUrl: gateway, organizationId: 'acme', appId: 'hr', userId: employee.userId })
      const stop = { now: false }
      const workers = Array.from({ length: WORKERS }, () => writeLoad(client, acknowledged, stop))
      // Killed once this cycle has had writes acknowledged (however slow the machine), at a random moment after:
      // after a random number of further acknowledged writes, whatever time they take.
      const acknowledgedWrites = () => acknowledged.started.size + acknowledged.completed.size
      const killAt = acknowledgedWrites() + 4 + Math.floor(Math.random() * 8)
      await waitUntil(acknowledgedWrites, (count) => count >= killAt, 30_000, 5)
      t.ok(acknowledgedWrites() >= killAt, `cycle ${cycle}: killed after ${killAt} acknowledged writes`)
      const killed = service
      killed.child.kill('SIGKILL')
      // At once: no wait for the killed process to be reaped, as a supervisor's restart loop does.
      service = spawnService('all-in-one', { DATA_DIR: dataDir })
      stop.now = true
      const killedAt = Date.now()
      await Promise.all(workers)
      t.comment(`cycle ${cycle}: workers stopped after ${Date.now() - killedAt} ms`)
      t.equal((await killed.exited).signal, 'SIGKILL', `cycle ${cycle}: killed`)
      const restarted = await service.ready.then(
        (urls) => urls,
        (error: Error) => error,
      )
      if (restarted instanceof Error) {
        t.fail(`cycle ${cycle}: the restart right after kill -9 failed: ${restarted.message}`)
        return
      }
      t.pass(`cycle ${cycle}: the restart right after kill -9 started (${Date.now() - killedAt} ms after the kill)`)
      gateway = restarted['workflow-gateway']!
    }
    service.child.kill('SIGKILL')
    await service.exited

    t.ok(
      acknowledged.started.size >= CYCLES * 2,
      `a write load ran: ${acknowledged.started.size} starts and ${acknowledged.completed.size} completions acknowledged`,
    )
    const store = await openStore({ dataDir })
    t.teardown(() => store.close())
    const contexts = store.collection<StoredContext>(Collections.contexts)
    const missing: string[] = []
    const notCompleted: string[] = []
    for (const id of acknowledged.started) {
      const context = await contexts.findOne({ _id: id })
      if (!context) missing.push(id)
      else if (acknowledged.completed.has(id) && !requestCompleted(context)) notCompleted.push(id)
    }
    t.same(missing, [], `all ${acknowledged.started.size} acknowledged starts are stored`)
    t.same(notCompleted, [], `all ${acknowledged.completed.size} acknowledged completions are stored`)
    const problems: string[] = []
    for (const context of await contexts.find({}).toArray()) problems.push(...(await inconsistencies(store, context._id)))
    t.same(problems, [], `every stored instance (${await contexts.countDocuments()}) agrees with its activities and its notification`)
  },
)
