/** Test support: the built all-in-one as a child process for the length of a test, as `npm start` runs it. */
import { type ChildService, spawnService } from './child-service.js'
import { type Teardown, tempDir } from './harness.js'

export interface RunningAllInOne {
  service: ChildService
  gatewayUrl: string
  engineUrl: string
}

/**
 * Starts the all-in-one with `env` over a data dir of its own and answers once both services listen.
 * The test's teardown stops it with `stopSignal`: SIGTERM shuts it down gracefully, SIGKILL suits a
 * test that may leave a request hanging.
 */
export async function startAllInOne(
  t: Teardown,
  env: Record<string, string> = {},
  stopSignal: NodeJS.Signals = 'SIGTERM',
): Promise<RunningAllInOne> {
  const service = spawnService('all-in-one', { DATA_DIR: tempDir(t), ...env })
  t.teardown(async () => {
    service.child.kill(stopSignal)
    await service.exited
  })
  const urls = await service.ready
  return { service, gatewayUrl: urls['workflow-gateway']!, engineUrl: urls['workflow-engine']! }
}
