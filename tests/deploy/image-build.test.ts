// test-timeout-seconds: 1500
/**
 * The container image, proved without Docker (no container runtime runs where the tests run): the
 * Dockerfile is parsed (tests/deploy/dockerfile.ts refuses what it does not know), the build context
 * is laid out as .dockerignore leaves it, the build stage's RUN steps run in it, the runtime stage
 * copies what it copies into a directory of its own, and the image's command, started from there
 * with the production environment, serves a leave request end to end. The compose file's commands
 * start from the same directory. A cold build (npm ci compiling better-sqlite3) takes minutes;
 * tests/deploy/image-builder.ts caches an unchanged RUN step as Docker does.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { examplesDir, repoRoot } from '../../lib/server/paths.js'
import { hs256Tokens, runLeaveRequest } from '../../scripts/examples/leave-request.js'
import { type ChildService, spawnCommand } from '../../services/testing/child-service.js'
import { tempDir } from '../../services/testing/harness.js'
import { tokenFor } from '../../services/testing/tokens.js'
import { composeEnvironment, readCompose } from './compose.js'
import { parseDockerfile } from './dockerfile.js'
import { type BuiltStage, buildImage, contextFrom, dockerignoreOf } from './image-builder.js'

const dockerfilePath = join(repoRoot, 'Dockerfile')
const stages = parseDockerfile(readFileSync(dockerfilePath, 'utf8'))
const SECRETS = { JWT_SECRET: 'image-test-jwt-secret-0123456789abcdef0123', ADMIN_TOKEN: 'image-test-admin-token-0123' }
const BUILD_TIMEOUT_MS = 20 * 60_000
const packageJson = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string; config: { nodeOptions: string } }
const packageVersion = packageJson.version
const servicesNodeOptions = packageJson.config.nodeOptions

t.test('an instruction, flag or form the image test does not carry out stops it with its line and reason', async (t) => {
  const refusals: Array<[string, RegExp]> = [
    ['FROM node:20\nADD app.tar /app\n', /line 2: `ADD app.tar \/app`: ADD is not an instruction the image test carries out/],
    ['FROM node:20\nCOPY --link . .\n', /line 2: .*COPY --link/],
    ['FROM node:20\nCOPY src/*.ts ./\n', /line 2: .*wildcards/],
    ['FROM node:20\nRUN --mount=type=cache,target=/root/.npm npm ci\n', /line 2: .*RUN flags/],
    ['FROM node:20\nCMD node dist/services/all-in-one.js\n', /line 2: .*shell form/],
    ['FROM node:20\nARG VERSION\nENV VERSION=$VERSION\n', /line 2: .*ARG/],
  ]
  for (const [dockerfile, reason] of refusals) t.throws(() => parseDockerfile(dockerfile), { message: reason }, dockerfile)
})

const hadolintMissing = spawnSync('sh', ['-c', 'command -v hadolint']).status !== 0
t.test(
  'the Dockerfile passes hadolint',
  {
    skip: hadolintMissing && 'hadolint is not on PATH (Debian has no package of it: put its release binary on PATH to lint the Dockerfile)',
  },
  async (t) => {
    const lint = spawnSync('hadolint', [dockerfilePath], { encoding: 'utf8' })
    t.equal(lint.status, 0, lint.stdout + lint.stderr)
  },
)

t.test('.dockerignore keeps out of the build context, at any depth, everything .gitignore keeps out of git', async (t) => {
  const dockerignore = dockerignoreOf(repoRoot)
  const patterns = readFileSync(join(repoRoot, '.gitignore'), 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
  for (const pattern of patterns) {
    // A path the pattern ignores, at the top and deeper down (a pattern without a `/` inside matches anywhere).
    const example = pattern.replace(/\/$/, '').replaceAll('*', 'example')
    for (const path of [example, `${example}/file`, `sdk/${example}`, `sdk/${example}/file`])
      t.ok(dockerignore.ignores(path), `${path} (.gitignore: ${pattern}) is not in the build context`)
  }
  t.notOk(dockerignore.ignores('services/all-in-one.ts'), 'the sources are')
})

t.test('the image is two stages on one Node.js base image, and runs as node in production mode on every interface', async (t) => {
  t.equal(stages.length, 2, 'a build stage and the runtime stage')
  const [build, runtime] = stages
  t.equal(runtime?.image, build?.image, 'the native module built in the build stage runs on the same system in the runtime stage')
  const major = /^node:(\d+)/.exec(runtime?.image ?? '')?.[1]
  t.ok(major, 'a node image')
  if (major !== process.versions.node.split('.')[0])
    t.comment(`this machine runs Node.js ${process.version}, the image ${runtime?.image}: the build below uses this machine's`)
  const steps = runtime?.steps ?? []
  t.match(
    steps.filter((step) => step.kind === 'env'),
    [{ values: { NODE_ENV: 'production', HOST: '0.0.0.0', NODE_OPTIONS: servicesNodeOptions } }],
    "the services' V8 flags are package.json's, which npm start and make run pass",
  )
  t.match(steps.at(-1), { kind: 'cmd', argv: ['node', 'dist/services/all-in-one.js'] }, 'the all-in-one when started without a command')
  t.match(
    steps.filter((step) => step.kind === 'user'),
    [{ user: 'node' }],
    'not root',
  )
  t.ok(
    steps.every((step) => step.kind !== 'copy' || step.from !== undefined),
    'the runtime stage takes everything from the build stage, nothing from the context',
  )
})

/** The image, built once for the tests below: its last stage, and the directory its WORKDIR is. */
interface Image {
  runtime: BuiltStage
  /** The runtime stage's WORKDIR: what the image holds for the services. */
  appDir: string
  /** The build stage's WORKDIR. */
  buildDir: string
}
let image: Promise<Image> | undefined
function builtImage(): Promise<Image> {
  image ??= (async () => {
    const contextDir = tempDir(t, 'workflow-image-context-')
    const files = contextFrom(repoRoot, contextDir)
    t.comment(`build context: ${files.length} files`)
    const workDir = tempDir(t, 'workflow-image-')
    const built = await buildImage(stages, {
      contextDir,
      workDir,
      // npm takes what its cache holds without asking the registry first; nothing comes from the repository's node_modules.
      runEnv: { npm_config_prefer_offline: 'true', npm_config_update_notifier: 'false', ...compilerCache(workDir) },
      log: (line) => t.comment(line),
    })
    const [build, runtime] = [built[0]!, built.at(-1)!]
    return { runtime, appDir: join(runtime.root, runtime.workdir), buildDir: join(build.root, build.workdir) }
  })()
  return image
}

/**
 * ccache, when this machine has it (.ci/run installs it): `make install` compiled better-sqlite3
 * through it (scripts/install/npm-ci.sh), so the build stage's `npm ci` compiles it again from the
 * cached objects, in seconds rather than minutes; what is compiled, and how, is the same. Paths
 * under the stages' directory hash as relative ones, as the install's under the repository do, and
 * the locale is left out of the hash (the steps run without the LANG the install had).
 */
function compilerCache(workDir: string): Record<string, string> {
  if (spawnSync('sh', ['-c', 'command -v ccache']).status !== 0) return {}
  return { CC: 'ccache cc', CXX: 'ccache g++', CCACHE_BASEDIR: workDir, CCACHE_NOHASHDIR: 'true', CCACHE_SLOPPINESS: 'locale' }
}

/** Every file under `dir`, relative to it. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
}

t.test(
  'the image holds the built services, the OpenAPI documents, production dependencies and a data dir, and no tests or test support',
  { timeout: BUILD_TIMEOUT_MS },
  async (t) => {
    const { runtime, appDir, buildDir } = await builtImage()
    t.same(readdirSync(appDir).sort(), ['.data', 'dist', 'node_modules', 'openapi', 'package.json'])
    t.same(readdirSync(join(appDir, 'openapi', 'generated')).sort(), ['engine.openapi.json', 'gateway.openapi.json'])
    t.same(
      readdirSync(join(appDir, 'dist')).sort(),
      ['console', 'lib', 'model', 'openapi', 'plugins', 'runtime', 'sdk', 'services', 'store'],
      'no tests/ or scripts/ (sdk/ only for the webhook signature lib/webhooks/ imports from it; console/ the bundle the gateway serves)',
    )
    t.same(
      readdirSync(join(appDir, 'dist', 'console')).sort(),
      ['console.css', 'console.css.map', 'console.js', 'console.js.map', 'index.html'],
      'the console, bundled (docs/console.md)',
    )
    const built = filesUnder(join(appDir, 'dist'))
    t.same(
      built.filter((file) => /\.test\.js|(^|\/)(testing|fixtures)(\/|$)|test-support\.js/.test(file)),
      [],
      'no test files, services/testing, fixtures or test support',
    )
    t.ok(built.includes('services/engine/flow-host/isolation/sandbox-process.js'), 'the files the services start by URL are built too')

    const lock = JSON.parse(readFileSync(join(buildDir, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { dev?: boolean }>
    }
    const devOnly = Object.entries(lock.packages).filter(([path, entry]) => path.startsWith('node_modules/') && entry.dev === true)
    t.ok(devOnly.length > 0, 'the lockfile marks the packages only development needs')
    t.same(
      devOnly.map(([path]) => path).filter((path) => existsSync(join(appDir, path))),
      [],
      'no package only development needs is installed',
    )
    for (const tool of ['typescript', 'tap', 'eslint', 'knip']) t.notOk(existsSync(join(appDir, 'node_modules', tool)), `no ${tool}`)
    t.ok(existsSync(join(appDir, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node')), 'the native SQLite module')

    t.equal(runtime.user, 'node')
    t.same(
      Object.fromEntries(runtime.owners),
      { '/app/.data': 'node:node' },
      'the user the services run as owns their data dir, and nothing else',
    )
  },
)

/** Starts `argv` from the image's WORKDIR with its environment and `env`; stopped with SIGTERM at the test's end. */
async function startFromImage(t: Test, argv: string[], env: Record<string, string>, services: number): Promise<Record<string, string>> {
  const { runtime, appDir } = await builtImage()
  const service: ChildService = spawnCommand(argv, { cwd: appDir, env: { ...runtime.env, ...env } }, services)
  t.teardown(async () => {
    service.child.kill('SIGTERM')
    await service.exited
  })
  return service.ready
}

t.test(
  "the image's command serves a leave request end to end with NODE_ENV=production, jwt authentication and an admin token",
  { timeout: BUILD_TIMEOUT_MS },
  async (t) => {
    const { runtime } = await builtImage()
    const urls = await startFromImage(
      t,
      runtime.cmd ?? [],
      // Every flow function in the sandbox process's worker pool, so that its files are proved in the image too.
      { AUTH_MODE: 'jwt', ...SECRETS, DATA_DIR: tempDir(t), FLOW_INLINE_BUDGET_MS: '0', FLOW_WORKERS: '2' },
      2,
    )
    const outcome = await runLeaveRequest({
      baseUrl: urls['workflow-gateway']!,
      adminToken: SECRETS.ADMIN_TOKEN,
      tokenFor: hs256Tokens(SECRETS.JWT_SECRET),
      modelsDir: examplesDir,
    })
    t.same(outcome.finalStatus, { tasks: [], processStatus: 'completed' }, 'the approved request finished the process')
    t.match(outcome.dataInstance, { booked: true, payrollUpdated: true, teamInformed: true }, 'its flow functions ran')
    for (const path of ['/console', '/console/console.js', '/console/console.css'])
      t.equal((await fetch(`${urls['workflow-gateway']!}${path}`)).status, 200, `the gateway serves ${path} from the image`)
  },
)

t.test(
  "each compose service's command starts from the image with the compose file's environment",
  { timeout: BUILD_TIMEOUT_MS },
  async (t) => {
    const { engine, gateway } = readCompose()
    const { appDir } = await builtImage()
    for (const service of [engine, gateway])
      t.ok(existsSync(join(appDir, service?.command?.[1] ?? 'missing')), `${service?.command?.join(' ')} is in the image`)
    // The embedded store stands in for MongoDB, which does not run here (a gateway alone on one must
    // opt in: it is not the engine's store); ports are ephemeral.
    const local = (environment: Record<string, string>) => {
      const { MONGODB_URI: _mongodb, ...rest } = environment
      return { ...rest, GATEWAY_PORT: '0', ENGINE_PORT: '0', DATA_DIR: tempDir(t), ALLOW_GATEWAY_EMBEDDED_STORE: 'true' }
    }
    const engineUrl = (await startFromImage(t, engine?.command ?? [], local(composeEnvironment(engine ?? {})), 1))['workflow-engine']!
    const gatewayEnv: Record<string, string> = {
      ...local(composeEnvironment(gateway ?? {})),
      ENGINE_URL: engineUrl,
      LOG_SOURCE_WFM_URL: `${engineUrl}/internal/serviceLog`,
    }
    const gatewayUrl = (await startFromImage(t, gateway?.command ?? [], gatewayEnv, 1))['workflow-gateway']!

    const health = await fetch(`${gatewayUrl}/healthcheck`)
    t.match(
      await health.json(),
      { status: 'success', data: { name: 'workflow-gateway', version: packageVersion } },
      'the gateway reads its package.json',
    )
    // A proxied request for a user the engine does not know: the engine's own answer comes back.
    const proxied = await fetch(`${gatewayUrl}/process/no-such-instance`, {
      headers: { authorization: `Bearer ${await tokenFor('nobody', { secret: gatewayEnv.JWT_SECRET! })}` },
    })
    t.match(await proxied.json(), { error: { code: /^wm/ } }, 'the gateway reaches the engine')
  },
)
