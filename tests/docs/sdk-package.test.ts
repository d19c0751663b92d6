/**
 * The SDK as integrators get it (docs/sdk.md): `npm pack` in sdk/ gives a tarball of the built files,
 * README and package.json only; it installs into an empty project in the OS temp dir, where nothing
 * of the repository is reachable, with the page's own install command; the page's TypeScript sample
 * compiles with `tsc --strict` under the page's tsconfig and runs, and its JavaScript sample runs,
 * each against a live all-in-one: a leave request from start to approval and its signed webhooks.
 */
import { execFile } from 'node:child_process'
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, parse } from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
import { repoRoot } from '../../lib/server/paths.js'
import { HR_MODELS } from '../../scripts/examples/leave-request.js'
import { WorkflowClient, type Schemas } from '../../sdk/client.js'
import { spawnService } from '../../services/testing/child-service.js'
import { tempDir } from '../../services/testing/harness.js'
import { commandMissing, pageBlocks, runShellBlocks } from './doc-blocks.js'

const PAGE = 'docs/sdk.md'
const SDK_DIR = join(repoRoot, 'sdk')
const TSC = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc')
const run = promisify(execFile)
const missing = ['bash', 'npm'].filter(commandMissing)

/** npm as a developer runs it: the warm cache in the real HOME, no audit or funding noise, offline first. */
const NPM_ENV = {
  ...process.env,
  npm_config_prefer_offline: 'true',
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_update_notifier: 'false',
}

/** One sample: the only block with that info string on the page. */
function sample(info: string): string {
  const blocks = pageBlocks(PAGE, info)
  if (blocks.length !== 1) throw new Error(`${PAGE} should have one \`\`\`${info} block, has ${blocks.length}`)
  return blocks[0]!.source
}

async function deployHrModels(baseUrl: string): Promise<void> {
  const client = new WorkflowClient({ baseUrl, organizationId: 'acme', appId: 'hr' })
  for (const name of HR_MODELS) {
    const model = JSON.parse(readFileSync(join(repoRoot, 'examples', `${name}.json`), 'utf8')) as Schemas['Model']
    await client.post('/model/insertModel', { body: { model, live: true } })
  }
}

t.test('npm pack in sdk/ lists only the built JavaScript, its declarations, the README and package.json', async (t) => {
  const { stdout } = await run('npm', ['pack', '--dry-run', '--json'], { cwd: SDK_DIR, env: NPM_ENV })
  const [packed] = JSON.parse(stdout) as Array<{ name: string; files: Array<{ path: string }> }>
  const paths = packed!.files.map((file) => file.path).sort()
  t.equal(packed!.name, '@workflow-service/sdk')
  t.same(
    paths.filter((path) => !/^dist\/.+\.(js|d\.ts)$/.test(path)),
    ['README.md', 'package.json'],
  )
  for (const entry of ['dist/client.js', 'dist/client.d.ts', 'dist/webhooks.js', 'dist/webhooks.d.ts']) t.ok(paths.includes(entry), entry)
  t.notOk(
    paths.some((path) => path.includes('.test.')),
    'no tests',
  )
})

t.test(
  "the packed SDK installs into an empty project, where the page's TS and JS samples complete a leave request and verify its webhooks",
  {
    timeout: 300_000,
    skip:
      missing.length > 0 ? `needs ${missing.join(', ')} on PATH` : !existsSync(TSC) ? 'needs the repository installed (make build)' : false,
  },
  async (t) => {
    // A project in the OS temp dir: no node_modules above it, so the SDK resolves only from its own.
    const consumer = tempDir(t, 'workflow-sdk-consumer-')
    t.notOk(consumer.startsWith(repoRoot), `the consumer (${consumer}) is outside the repository`)
    const above = []
    for (let dir = parse(consumer).dir; dir !== parse(dir).root; dir = parse(dir).dir) above.push(join(dir, 'node_modules'))
    t.same([...above, join(parse(tmpdir()).root, 'node_modules')].filter(existsSync), [], 'no node_modules above the consumer')
    const packDir = tempDir(t, 'workflow-sdk-pack-')
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', packDir], { cwd: SDK_DIR, env: NPM_ENV })
    const tarball = (JSON.parse(stdout) as Array<{ filename: string }>)[0]!.filename
    const installBlock = sample('sh sdk-install')
    t.match(installBlock, `npm install ./${tarball}`, `the page installs the tarball npm pack writes (${tarball})`)
    copyFileSync(join(packDir, tarball), join(consumer, tarball))
    writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'sdk-consumer', private: true, type: 'module' }))

    const install = await runShellBlocks(pageBlocks(PAGE, 'sh sdk-install'), consumer, NPM_ENV as Record<string, string>)
    t.equal(install.code, 0, "the page's install command installs the tarball", { stderr: install.stderr.slice(-3000) })
    // The TypeScript consumer's own types for Node, at the repository's version (in the warm cache).
    const typesNode = (JSON.parse(readFileSync(join(repoRoot, 'node_modules/@types/node/package.json'), 'utf8')) as { version: string })
      .version
    await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--save-dev', `@types/node@${typesNode}`], {
      cwd: consumer,
      env: NPM_ENV,
    })
    t.ok(existsSync(join(consumer, 'node_modules/@workflow-service/sdk/dist/client.js')), 'the SDK is in the consumer node_modules')
    t.ok(existsSync(join(consumer, 'node_modules/openapi-fetch')), 'with its dependency')

    writeFileSync(join(consumer, 'tsconfig.json'), sample('json sdk-tsconfig'))
    const [typescriptSample, javascriptSample] = pageBlocks(PAGE, 'ts sdk-sample').concat(pageBlocks(PAGE, 'js sdk-sample'))
    writeFileSync(join(consumer, 'leave-request.ts'), typescriptSample!.source)
    writeFileSync(join(consumer, 'leave-request-plain.mjs'), javascriptSample!.source)
    const compiled = await run(process.execPath, [TSC, '-p', '.', '--strict'], { cwd: consumer }).then(
      () => ({ ok: true, output: '' }),
      (error: { stdout: string }) => ({ ok: false, output: error.stdout }),
    )
    t.ok(compiled.ok, 'the TypeScript sample compiles with tsc --strict against the installed declarations', { output: compiled.output })

    const service = spawnService('all-in-one', { DATA_DIR: tempDir(t), WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', BATCH_POLL_MS: '50' })
    t.teardown(async () => {
      service.child.kill('SIGTERM')
      await service.exited
    })
    const baseUrl = (await service.ready)['workflow-gateway']!
    await deployHrModels(baseUrl)
    const sampleEnv = { PATH: process.env.PATH ?? '', WORKFLOW_URL: baseUrl }

    const typescriptRun = await run(process.execPath, ['dist/leave-request.js'], { cwd: consumer, env: sampleEnv })
    t.match(typescriptRun.stdout, /^\S+: completed$/m, 'the TypeScript consumer completes a leave request')
    t.match(typescriptRun.stdout, /^verified Finished delivery \S+ of \S+$/m, 'and verifies its signed Finished webhook')

    const javascriptRun = await run(process.execPath, ['leave-request-plain.mjs'], { cwd: consumer, env: sampleEnv })
    t.match(javascriptRun.stdout, /^\S+: completed$/m, 'the JavaScript consumer completes a leave request')
    t.match(javascriptRun.stdout, /^unknown instance: 404 \w+$/m, 'a failed call is a WorkflowApiError with its code')
    t.match(javascriptRun.stdout, /^verified Created delivery \S+\nverified Finished delivery \S+$/m, 'and verifies its signed webhooks')
  },
)
