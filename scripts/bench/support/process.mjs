// @ts-check
/** Starting the services a bench measures, each as a process of its own on 127.0.0.1. */
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { DIST, requireBuild } from './dist.mjs'
import { freePort } from './free-port.mjs'

/**
 * @typedef {{ pid: number, stop: () => Promise<void> }} Running
 */

/**
 * Spawns `command` and resolves once every URL of `ready` answers 2xx; the child is stopped again
 * when it exits or does not answer in time. Its environment is only PATH, HOST and `env`, so the
 * caller's shell does not leak settings into what is measured.
 * @param {{ command?: string, args: string[], env?: Record<string, string>, ready: string[], timeoutMs?: number }} options
 * @returns {Promise<Running>}
 */
export async function startProcess({ command = process.execPath, args, env = {}, ready, timeoutMs = 60_000 }) {
  const child = spawn(command, args, {
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'inherit', 'inherit'],
  })
  const exited = new Promise((resolveExit) => child.once('exit', resolveExit))
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
    await exited
  }
  const name = [command, ...args].join(' ')
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (await allAnswer(ready)) break
    if (child.exitCode !== null) throw new Error(`${name} exited (${child.exitCode}) before answering`)
    if (Date.now() > deadline) {
      await stop()
      throw new Error(`${name} did not answer within ${timeoutMs / 1000} s`)
    }
    await new Promise((wait) => setTimeout(wait, 100))
  }
  return { pid: /** @type {number} */ (child.pid), stop }
}

/** @param {string[]} urls */
async function allAnswer(urls) {
  try {
    for (const url of urls) if (!(await fetch(url)).ok) return false
    return true
  } catch {
    return false // not listening yet
  }
}

/**
 * The V8 flags a tree's services run with, as its `npm start` passes them (package.json
 * `config.nodeOptions`); none for a tree from before it had them.
 * @param {string} dist
 * @returns {string[]}
 */
function servicesNodeOptions(dist) {
  const packageJson = JSON.parse(readFileSync(join(dist, '..', 'package.json'), 'utf8'))
  return (packageJson.config?.nodeOptions ?? '').split(' ').filter((/** @type {string} */ flag) => flag !== '')
}

/**
 * The built all-in-one (gateway and engine in one process) on its own ports, started as that tree's
 * `npm start` starts it; `dist` is another tree's build (a baseline, support/baseline.mjs), this
 * one's by default. `nodeArgs` come after the tree's own flags, so they can override them.
 * @param {{ dataDir: string, env?: Record<string, string>, nodeArgs?: string[], dist?: string }} options
 * @returns {Promise<Running & { gateway: string, engine: string }>}
 */
export async function startAllInOne({ dataDir, env = {}, nodeArgs = [], dist = DIST }) {
  if (dist === DIST) requireBuild('services/all-in-one.js')
  const [gatewayPort, enginePort] = [await freePort(), await freePort()]
  const gateway = `http://127.0.0.1:${gatewayPort}`
  const engine = `http://127.0.0.1:${enginePort}`
  const running = await startProcess({
    args: [...servicesNodeOptions(dist), ...nodeArgs, join(dist, 'services', 'all-in-one.js')],
    env: { DATA_DIR: dataDir, LOG_LEVEL: 'warn', GATEWAY_PORT: String(gatewayPort), ENGINE_PORT: String(enginePort), ...env },
    ready: [`${gateway}/liveness`, `${engine}/liveness`],
    timeoutMs: 120_000,
  })
  return { ...running, gateway, engine }
}
