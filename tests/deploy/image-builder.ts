/**
 * Builds what a Dockerfile builds, without Docker: this machine stands in for the base image, each
 * stage's filesystem is a directory, and the steps are carried out as Docker would (WORKDIR, ENV,
 * COPY from the build context or an earlier stage, RUN through `sh -c`, USER, CMD). Two kinds of
 * RUN need root inside an image and are checked instead of run: installing Debian packages (their
 * commands must be on this machine) and creating a directory owned by a user (recorded in `owners`).
 *
 * Like Docker, it keeps the result of a RUN in a cache keyed by everything that led to it (the base
 * image, the instructions, the copied files' contents, and this machine's Node.js), so an unchanged
 * `npm ci` step is not repeated; IMAGE_BUILD_CACHE=off builds everything afresh.
 */
import { spawn, spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, posix } from 'node:path'
import dockerignore from '@balena/dockerignore'
import type { Stage, Step } from './dockerfile.js'

export interface BuiltStage {
  /** The stage's filesystem: the image's `/` */
  root: string
  workdir: string
  env: Record<string, string>
  user: string
  cmd: string[] | undefined
  exposed: number[]
  /** Image paths given an owner by COPY --chown or a RUN that creates owned directories. */
  owners: Map<string, string>
}

export interface BuildOptions {
  /** The build context, laid out as `contextFrom` does. */
  contextDir: string
  /** Where the stages' filesystems are made. */
  workDir: string
  /** Added to the environment of every RUN (e.g. npm's `npm_config_prefer_offline`). */
  runEnv?: Record<string, string>
  log?: (line: string) => void
}

/** The commands the Debian packages an image installs provide here. */
const PACKAGE_COMMANDS: Record<string, string> = { python3: 'python3', make: 'make', 'g++': 'g++', gcc: 'gcc' }
const APT_INSTALL = /^apt-get update && apt-get install -y(?: --no-install-recommends)? ([^&]+?) && rm -rf \/var\/lib\/apt\/lists\/\*$/
const OWNED_DIRECTORIES = /^install -d -o (\S+) -g (\S+) ((?:\S+ ?)+)$/
const CACHE_DIR = join(tmpdir(), 'workflow-image-build-cache')
const CACHE_ENTRIES_KEPT = 4

/**
 * Copies the files of the repository at `repoRoot` that a `docker build` there would send: those
 * git tracks, less what `.dockerignore` excludes (matched by @balena/dockerignore, Docker's rules).
 */
export function contextFrom(repoRoot: string, contextDir: string): string[] {
  const tracked = spawnSync('git', ['ls-files', '-z', '--cached'], { cwd: repoRoot, encoding: 'utf8' })
  if (tracked.status !== 0) throw new Error(`git ls-files failed: ${tracked.stderr}`)
  // A file deleted in the working tree but not yet in git is not in Docker's context either.
  const files = dockerignoreOf(repoRoot)
    .filter(tracked.stdout.split('\0').filter(Boolean))
    .filter((file) => existsSync(join(repoRoot, file)))
  for (const file of files) {
    mkdirSync(dirname(join(contextDir, file)), { recursive: true })
    cpSync(join(repoRoot, file), join(contextDir, file), { verbatimSymlinks: true })
  }
  return files
}

/** The repository's .dockerignore, matched as Docker matches it (case-sensitive, patterns from the context's root). */
export function dockerignoreOf(repoRoot: string): ReturnType<typeof dockerignore.default> {
  // The package's CommonJS export is its function, also set as `default` for TypeScript.
  return dockerignore.default({ ignorecase: false }).add(readFileSync(join(repoRoot, '.dockerignore'), 'utf8'))
}

/** Builds every stage in order; the last one is the image. */
export async function buildImage(stages: Stage[], options: BuildOptions): Promise<BuiltStage[]> {
  const built: Array<BuiltStage & { key: string }> = []
  for (const [index, stage] of stages.entries()) {
    const root = join(options.workDir, `stage-${index}`)
    mkdirSync(root, { recursive: true })
    const state: StageState = {
      root,
      workdir: '/',
      env: {},
      user: 'root',
      cmd: undefined,
      exposed: [],
      owners: new Map(),
      key: hash(stage.image),
    }
    for (const step of stage.steps) {
      const started = Date.now()
      await carryOut(step, state, { stages, built, options })
      options.log?.(`stage ${index} line ${step.line}: ${step.text} (${Date.now() - started} ms)`)
    }
    built.push(state)
  }
  return built
}

interface StageState extends BuiltStage {
  /** What led to the stage's filesystem as it is: the key of a RUN's cache entry. */
  key: string
}

interface BuildSoFar {
  stages: Stage[]
  built: StageState[]
  options: BuildOptions
}

async function carryOut(step: Step, state: StageState, { stages, built, options }: BuildSoFar): Promise<void> {
  const inImage = (path: string) => posix.resolve(state.workdir, path)
  const onDisk = (imagePath: string) => join(state.root, imagePath)
  state.key = hash(state.key, step.text)
  switch (step.kind) {
    case 'workdir':
      state.workdir = inImage(step.path)
      mkdirSync(onDisk(state.workdir), { recursive: true })
      return
    case 'env':
      state.env = { ...state.env, ...step.values }
      return
    case 'user':
      state.user = step.user
      return
    case 'expose':
      state.exposed.push(...step.ports)
      return
    case 'cmd':
      state.cmd = step.argv
      return
    case 'copy': {
      const source = step.from === undefined ? { root: options.contextDir, key: '' } : stageNamed(step.from, stages, built)
      const sourcePaths = step.sources.map((path) => join(source.root, posix.resolve('/', path)))
      state.key = hash(state.key, step.from === undefined ? contentHash(source.root, step.sources) : source.key)
      const destination = inImage(step.destination)
      const intoDirectory = step.destination.endsWith('/') || step.sources.length > 1
      for (const sourcePath of sourcePaths) {
        if (!existsSync(sourcePath)) throw new Error(`line ${step.line}: ${sourcePath} does not exist (${step.text})`)
        // A directory's contents are copied; a file lands in a destination directory or becomes the destination.
        const target =
          statSync(sourcePath).isDirectory() || !intoDirectory ? destination : posix.join(destination, posix.basename(sourcePath))
        mkdirSync(dirname(onDisk(target)), { recursive: true })
        cpSync(sourcePath, onDisk(target), { recursive: true, verbatimSymlinks: true })
        if (step.chown !== undefined) state.owners.set(target, step.chown)
      }
      return
    }
    case 'run':
      return run(step, state, options)
  }
}

function stageNamed(name: string, stages: Stage[], built: StageState[]): StageState {
  const index = /^\d+$/.test(name) ? Number(name) : stages.findIndex((stage) => stage.name === name)
  const stage = built[index]
  if (!stage) throw new Error(`COPY --from=${name}: no earlier stage of that name`)
  return stage
}

async function run(step: Extract<Step, { kind: 'run' }>, state: StageState, options: BuildOptions): Promise<void> {
  const packages = APT_INSTALL.exec(step.command)
  if (packages) return checkPackages(packages[1]!.split(' '), step.line)
  const owned = OWNED_DIRECTORIES.exec(step.command)
  if (owned) {
    for (const directory of owned[3]!.trim().split(' ')) {
      const path = posix.resolve(state.workdir, directory)
      mkdirSync(join(state.root, path), { recursive: true })
      state.owners.set(path, `${owned[1]}:${owned[2]}`)
    }
    return
  }
  // Docker's cache key of a RUN is what came before it; this machine's Node.js builds the native modules.
  state.key = hash(state.key, process.version, process.arch, process.platform)
  if (restoreCached(state)) {
    options.log?.(`line ${step.line}: cached`)
    return
  }
  const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...state.env, ...options.runEnv }
  const outcome = await new Promise<{ code: number | null; output: string }>((resolve) => {
    const child = spawn('sh', ['-c', step.command], { cwd: join(state.root, state.workdir), env, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.on('close', (code) => resolve({ code, output }))
  })
  if (outcome.code !== 0)
    throw new Error(`line ${step.line}: \`${step.command}\` exited with ${outcome.code}:\n${outcome.output.slice(-4000)}`)
  saveCached(state)
}

function checkPackages(packages: string[], line: number): void {
  for (const name of packages) {
    const command = PACKAGE_COMMANDS[name]
    if (command === undefined) throw new Error(`line ${line}: which command Debian's ${name} provides is not known to the image test`)
    if (spawnSync('sh', ['-c', `command -v ${command}`]).status !== 0)
      throw new Error(`line ${line}: the image installs ${name}; this machine lacks \`${command}\` (apt-get install ${name})`)
  }
}

function restoreCached(state: StageState): boolean {
  const entry = join(CACHE_DIR, state.key)
  if (process.env.IMAGE_BUILD_CACHE === 'off' || !existsSync(entry)) return false
  const now = new Date()
  utimesSync(entry, now, now)
  rmSync(state.root, { recursive: true, force: true })
  cpSync(entry, state.root, { recursive: true, verbatimSymlinks: true })
  return true
}

/** Keeps the stage as it is after a RUN, and the most recently used entries only. */
function saveCached(state: StageState): void {
  if (process.env.IMAGE_BUILD_CACHE === 'off') return
  mkdirSync(CACHE_DIR, { recursive: true })
  const partial = join(CACHE_DIR, `${state.key}.partial-${process.pid}`)
  cpSync(state.root, partial, { recursive: true, verbatimSymlinks: true })
  try {
    renameSync(partial, join(CACHE_DIR, state.key))
  } catch {
    // Another build saved the same entry first.
    rmSync(partial, { recursive: true, force: true })
  }
  const hourAgo = Date.now() - 3_600_000
  const entries = readdirSync(CACHE_DIR)
    .filter((name) => !name.includes('.partial-'))
    .map((name) => ({ path: join(CACHE_DIR, name), used: statSync(join(CACHE_DIR, name)).mtimeMs }))
    .sort((a, b) => b.used - a.used)
  // An entry used within the hour may be being restored by a build running beside this one.
  for (const stale of entries.slice(CACHE_ENTRIES_KEPT).filter((entry) => entry.used < hourAgo))
    rmSync(stale.path, { recursive: true, force: true })
}

function hash(...parts: string[]): string {
  const digest = createHash('sha256')
  for (const part of parts) digest.update(part).update('\0')
  return digest.digest('hex').slice(0, 32)
}

/** The names (relative to `root`) and contents of every file under `paths`. */
function contentHash(root: string, paths: string[]): string {
  const digest = createHash('sha256')
  const visit = (name: string): void => {
    const path = join(root, name)
    digest.update(name).update('\0')
    if (statSync(path).isDirectory()) for (const child of readdirSync(path).sort()) visit(posix.join(name, child))
    else digest.update(readFileSync(path))
  }
  for (const path of paths) visit(posix.resolve('/', path))
  return digest.digest('hex')
}
