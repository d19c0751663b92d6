/** deploy/compose.yaml as the deploy tests read it, with `${NAME:?message}` filled in as compose does. */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse } from 'yaml'
import { repoRoot } from '../../lib/server/paths.js'

export interface ComposeService {
  image?: string
  build?: string
  command?: string[]
  environment?: Record<string, string>
}

export const composePath = join(repoRoot, 'deploy', 'compose.yaml')

export function readCompose(): Record<string, ComposeService> {
  return (parse(readFileSync(composePath, 'utf8'), { merge: true }) as { services: Record<string, ComposeService> }).services
}

/** The secrets a caller gives `docker compose up` (the file refuses to start without them). */
export const COMPOSE_SECRETS = { JWT_SECRET: 'compose-test-secret-0123456789abcdef0123', ADMIN_TOKEN: 'compose-test-admin-token' }

/** A service's environment as compose passes it on, with `values` standing for the caller's environment. */
export function composeEnvironment(service: ComposeService, values: Record<string, string> = COMPOSE_SECRETS): Record<string, string> {
  return Object.fromEntries(
    Object.entries(service.environment ?? {}).map(([key, value]) => [
      key,
      value.replace(/\$\{([A-Z_]+)(:\?[^}]*)?\}/g, (_, name: string) => values[name] ?? ''),
    ]),
  )
}
