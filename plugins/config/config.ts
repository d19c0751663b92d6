/**
 * The service's configuration: DESIGN.md §2's environment, read once and validated by a pure
 * function so that a bad value stops start-up with a message that names it.
 */
import { resolve } from 'node:path'

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

export interface Config {
  gatewayPort: number
  enginePort: number
  host: string
  engineUrl: string
  dataDir: string
  mongodbUri: string | undefined
  logLevel: LogLevel
  /** `NODE_ENV=development` shows stacks in error answers. */
  development: boolean
}

export class ConfigError extends Error {
  constructor(readonly variable: string, problem: string) {
    super(`Invalid configuration: ${variable} ${problem}`)
    this.name = 'ConfigError'
  }
}

type Env = Record<string, string | undefined>

function port(env: Env, name: string, fallback: number): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (!/^\d+$/.test(raw) || Number(raw) > 65535) throw new ConfigError(name, `must be a port number from 0 to 65535, got "${raw}"`)
  return Number(raw)
}

function url(env: Env, name: string, fallback: string, protocols: readonly string[]): string {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  let parsed: URL
  try {
    parsed = new URL(raw)
  } catch {
    throw new ConfigError(name, `must be a URL, got "${raw}"`)
  }
  if (!protocols.includes(parsed.protocol)) throw new ConfigError(name, `must use ${protocols.join(' or ')}, got "${parsed.protocol}"`)
  return raw.replace(/\/+$/, '')
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (!(allowed as readonly string[]).includes(raw)) throw new ConfigError(name, `must be one of ${allowed.join(', ')}, got "${raw}"`)
  return raw as T
}

/** Parses and validates the environment. Throws ConfigError naming the first bad variable. */
export function parseConfig(env: Env, cwd: string = process.cwd()): Config {
  const enginePort = port(env, 'ENGINE_PORT', 3001)
  const host = env.HOST || '127.0.0.1'
  const mongodbUri = env.MONGODB_URI ? url(env, 'MONGODB_URI', '', ['mongodb:', 'mongodb+srv:']) : undefined
  return {
    gatewayPort: port(env, 'GATEWAY_PORT', 3000),
    enginePort,
    host,
    engineUrl: url(env, 'ENGINE_URL', `http://127.0.0.1:${enginePort}`, ['http:', 'https:']),
    dataDir: resolve(cwd, env.DATA_DIR || './.data'),
    mongodbUri: mongodbUri === undefined ? undefined : env.MONGODB_URI,
    logLevel: oneOf(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
    development: env.NODE_ENV === 'development',
  }
}
