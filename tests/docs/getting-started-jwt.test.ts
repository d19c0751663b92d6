/**
 * docs/getting-started-jwt.md runs as written: the service starts with the `export`s of its
 * ```sh jwt-service block (AUTH_MODE=jwt, JWT_SECRET, ADMIN_TOKEN), then its ```sh jwt-walkthrough
 * blocks run in order, from the repository's root (they use examples/ and `npm run token`), as one
 * bash session: the first admin through ADMIN_TOKEN, tokens minted for it and a first user, a first call.
 */
import t from 'tap'
import { repoRoot } from '../../lib/server/paths.js'
import { spawnService } from '../../services/testing/child-service.js'
import { tempDir } from '../../services/testing/harness.js'
import { commandMissing, pageBlocks, runShellBlocks } from './doc-blocks.js'

const PAGE = 'docs/getting-started-jwt.md'
const missing = ['bash', 'curl', 'jq', 'npm'].filter(commandMissing)

/** The settings a block gives the service: its `export NAME=value` lines. */
function exportsOf(source: string): Record<string, string> {
  return Object.fromEntries([...source.matchAll(/^export (\w+)=(\S+)$/gm)].map((match) => [match[1]!, match[2]!]))
}

t.test(
  "the jwt getting-started page's commands create the first admin and user, mint their tokens and make a first call",
  {
    timeout: 180_000,
    skip: missing.length > 0 ? `needs ${missing.join(', ')} on PATH (e.g. apt-get install ${missing.join(' ')})` : false,
  },
  async (t) => {
    const [serviceBlock, ...others] = pageBlocks(PAGE, 'sh jwt-service')
    const walkthrough = pageBlocks(PAGE, 'sh jwt-walkthrough')
    t.equal(others.length, 0, 'one block starts the service')
    t.match(serviceBlock?.source, /^make run$/m, 'the service block starts it with make run')
    t.ok(walkthrough.length >= 3, 'the walkthrough has its blocks')
    const settings = exportsOf(serviceBlock!.source)
    t.match(settings, { AUTH_MODE: 'jwt', JWT_SECRET: /.{32}/, ADMIN_TOKEN: /.{16}/ })

    const service = spawnService('all-in-one', { DATA_DIR: tempDir(t), ...settings })
    t.teardown(async () => {
      service.child.kill('SIGTERM')
      await service.exited
    })
    const base = (await service.ready)['workflow-gateway']!
    const anonymous = await fetch(`${base}/process/any`)
    t.equal(anonymous.status, 401, 'the service runs in jwt mode: no token, no answer')

    const home = tempDir(t, 'jwt-walkthrough-')
    const run = await runShellBlocks(walkthrough, repoRoot, { HOME: home, BASE: base, npm_config_update_notifier: 'false' })
    t.equal(run.code, 0, `the walkthrough ran to the end (last block started: ${run.lastBlock ?? 'none'})`, {
      stderr: run.stderr.slice(-4000),
      stdout: run.stdout.slice(-2000),
    })
    t.same(
      run.statuses.filter((status) => !status.startsWith('2')),
      [],
      'every call answered 2xx',
    )
    t.match(run.stdout, /^admin \S+$/m)
    t.match(run.stdout, /^employee \S+$/m)
    t.match(run.stdout, /\{"processStatus":"\w+"\}\s*$/, 'the employee reads the instance they started, with their own token')
  },
)
