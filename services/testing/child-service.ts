/** Runs a built service entry point as a child process, as `npm start` would, for process-level tests. */
import { type ChildProcess, spawn } from 'node:child_process'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { repoRoot } from '../../lib/server/paths.js'

export interface ChildService {
  child: ChildProcess
  /** Listening URLs by service name (`workflow-engine`, `workflow-gateway`), once all have started. */
  ready: Promise<Record<string, string>>
  /** Every line written to stdout so far. */
  stdoutLines: string[]
  /** Resolves with the exit code (or signal) and everything written to stderr. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>
}

export function spawnService(
  entry: 'all-in-one' | 'engine/server' | 'gateway/server',
  env: Record<string, string>,
  expectedServices = 2,
): ChildService {
  return spawnCommand([process.execPath, join(repoRoot, 'dist', 'services', `${entry}.js`)], { env }, expectedServices)
}

/**
 * Runs a service's command (`node <entry>`, as a container image's CMD names it) in `cwd`, on
 * ephemeral ports unless `env` names them; `node` is this very Node.js.
 */
export function spawnCommand(
  [command, ...args]: string[],
  options: { env: Record<string, string>; cwd?: string },
  expectedServices = 2,
): ChildService {
  const executable = command === 'node' ? process.execPath : command!
  const child = spawn(executable, args, {
    env: { PATH: process.env.PATH ?? '', GATEWAY_PORT: '0', ENGINE_PORT: '0', LOG_LEVEL: 'info', ...options.env },
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  const stdoutLines: string[] = []
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) =>
    child.on('exit', (code, signal) => setImmediate(() => resolve({ code, signal, stderr }))),
  )
  const ready = new Promise<Record<string, string>>((resolve, reject) => {
    const urls: Record<string, string> = {}
    createInterface({ input: child.stdout! }).on('line', (line) => {
      stdoutLines.push(line)
      try {
        const entryLine = JSON.parse(line) as { msg?: string; service?: string }
        const match = /^Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(entryLine.msg ?? '')
        if (match && entryLine.service) urls[entryLine.service] = match[1]!
        if (Object.keys(urls).length === expectedServices) resolve(urls)
      } catch {
        // not a log line
      }
    })
    // Its last log lines tell how far it got when a signal, which writes nothing to stderr, ended it.
    void exited.then(({ code, signal }) =>
      reject(
        new Error(`service exited (${code ?? signal}) before listening: ${stderr}\nits last lines:\n${stdoutLines.slice(-5).join('\n')}`),
      ),
    )
  })
  ready.catch(() => undefined)
  return { child, ready, stdoutLines, exited }
}
