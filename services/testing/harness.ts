/**
 * Test support: services built exactly as in production (buildService), on real ephemeral ports,
 * over an embedded store in a temporary directory that is removed when the test ends.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import pino, { type DestinationStream, type Logger } from 'pino'
import type { Clock } from '../../plugins/clock/plugin.js'
import { type Config, parseConfig } from '../../lib/config/config.js'
import type { LogRings } from '../../plugins/logging/ring.js'
import { openStore } from '../../store/open.js'
import { deepFreeze } from '../../lib/deep-freeze.js'
import type { Store } from '../../store/port.js'
import { buildService, type ServiceKind } from '../build.js'
import type { InProcessEngine } from '../gateway/proxy/in-process-engine.js'

/** The subset of a tap Test the harness needs, so it works with any test object. */
export interface Teardown {
  teardown(fn: () => unknown): void
}

export function tempDir(t: Teardown, prefix = 'workflow-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

export function testConfig(overrides: Partial<Config> = {}): Config {
  // Two flow workers: each costs a few hundred ms of CPU to start, and tests start many engines.
  return { ...parseConfig({ LOG_LEVEL: 'silent', FLOW_WORKERS: '2' }), ...overrides }
}

export const silentLogger: Logger = pino({ level: 'silent' })

/** A logger whose lines land in `lines` (parsed JSON), for tests about logging. */
export function capturingLogger(level: pino.LevelWithSilent = 'info'): { logger: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = []
  const destination: DestinationStream = { write: (chunk: string) => void lines.push(JSON.parse(chunk) as Record<string, unknown>) }
  return { logger: pino({ level }, destination), lines }
}

export async function openTestStore(t: Teardown): Promise<Store> {
  const store = await openStore({ dataDir: tempDir(t, 'workflow-store-') })
  t.teardown(() => store.close())
  return freezingHeldDocuments(store)
}

/**
 * The store, with the documents it hands over without a copy (`heldDocument`) frozen first: a test
 * of any route then fails where the engine would change one, which in production would change
 * memory's copy behind the store's back (store/port.ts).
 */
export function freezingHeldDocuments(store: Store): Store {
  const held = store.heldDocument?.bind(store)
  if (held) store.heldDocument = (collection, id) => deepFreeze(held(collection, id))
  return store
}

export interface RunningService {
  app: FastifyInstance
  /** `http://127.0.0.1:<port>` */
  url: string
}

export interface StartOptions {
  store?: Store
  config?: Partial<Config>
  logger?: Logger
  /** The log rings the log stream endpoints read (feed them with the logger, see ringDestination). */
  logRings?: LogRings
  /** The engine's clock (testing/clock.ts); the system clock when not given. */
  clock?: Clock
  /** A gateway's engine reached without HTTP, as the all-in-one's is. */
  inProcessEngine?: InProcessEngine
}

/** Builds the service as production does and listens on an ephemeral port; closed on teardown. */
export async function startService(t: Teardown, kind: ServiceKind, options: StartOptions = {}): Promise<RunningService> {
  const store = options.store ?? (await openTestStore(t))
  const app = await buildService(kind, {
    config: testConfig(options.config),
    store,
    logger: options.logger ?? silentLogger,
    ...(options.logRings ? { logRings: options.logRings } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.inProcessEngine ? { inProcessEngine: options.inProcessEngine } : {}),
  })
  const url = await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => app.close())
  return { app, url }
}
