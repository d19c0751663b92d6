import { spawnSync } from 'node:child_process'
import t from 'tap'
import { startService } from '../../services/testing/harness.js'
import { completeTask, startHrEngine, startLeaveRequest } from '../../services/testing/workflow.js'

/** Debian's `prometheus` package; `.ci/run` installs it when it is missing. */
const promtool = spawnSync('promtool', ['--version'], { encoding: 'utf8' })
const available = promtool.status === 0

t.test(
  'both expositions pass promtool check metrics',
  { skip: available ? false : 'promtool is not installed (apt-get install prometheus)' },
  async (t) => {
    const engine = await startHrEngine(t)
    const gateway = await startService(t, 'gateway', { store: engine.store, config: { engineUrl: engine.url } })
    // Metrics with labels are only exposed once observed: a lifecycle step, and a proxied call, first.
    const started = await startLeaveRequest(engine, engine.users.employee)
    await completeTask(engine, engine.users.employee, started.body)
    await fetch(`${gateway.url}/process/${started.body.context.processInstance.processInstanceId}`, {
      headers: { user: engine.users.employee.userId },
    })
    for (const url of [engine.url, gateway.url]) {
      const exposition = await (await fetch(`${url}/metrics`)).text()
      const check = spawnSync('promtool', ['check', 'metrics'], { input: exposition, encoding: 'utf8' })
      t.equal(check.status, 0, `${url}: ${check.stdout}${check.stderr}`)
    }
  },
)
