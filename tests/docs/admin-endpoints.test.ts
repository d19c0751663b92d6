/**
 * Every page that lists the admin endpoints lists the same ones, and they are the gateway document's
 * operations that take ADMIN_TOKEN (`adminToken` in their `security`). The served intro names no
 * document that is not in the repository.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { generatedOpenapiDir, repoRoot } from '../../lib/server/paths.js'

interface Operation {
  operationId?: string
  security?: Array<Record<string, unknown>>
}
interface Document {
  info: { description: string }
  security?: Array<Record<string, unknown>>
  paths: Record<string, Record<string, Operation>>
}

const served = (name: string): Document => JSON.parse(readFileSync(join(generatedOpenapiDir, `${name}.openapi.json`), 'utf8')) as Document
const gateway = served('gateway')

/** `/<segment>/*` when every operation under the segment is an admin one, else the paths themselves. */
function adminPaths(document: Document): string[] {
  const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.values(methods)
      .filter((operation) => typeof operation === 'object' && operation.operationId !== undefined)
      .map((operation) => ({ path, admin: (operation.security ?? document.security ?? []).some((entry) => 'adminToken' in entry) })),
  )
  const segment = (path: string): string => path.split('/')[1] ?? ''
  const listed = new Set<string>()
  for (const { path, admin } of operations) {
    if (!admin) continue
    const siblings = operations.filter((other) => segment(other.path) === segment(path))
    const whole = siblings.every((other) => other.admin) && siblings.some((other) => other.path !== `/${segment(path)}`)
    listed.add(whole ? `/${segment(path)}/*` : path)
  }
  return [...listed].sort()
}

/** Each "**Admin endpoints** (…)" listing of the text: the backquoted paths in its parentheses. */
function listings(text: string): string[][] {
  return [...text.matchAll(/\*\*admin endpoints\*\*\s*\(([^)]*)\)/gi)].map((match) =>
    [...match[1]!.matchAll(/`([^`]+)`/g)].map((path) => path[1]!).sort(),
  )
}

const pages: Array<[name: string, text: string]> = [
  ['README.md', readFileSync(join(repoRoot, 'README.md'), 'utf8')],
  ...['security.md', 'webhooks.md', 'api.md'].map((page): [string, string] => [
    `docs/${page}`,
    readFileSync(join(repoRoot, 'docs', page), 'utf8'),
  ]),
  ['the Swagger intro (openapi/gateway.yaml info.description)', gateway.info.description],
]

t.test('the admin endpoints are the gateway operations that take ADMIN_TOKEN', async (t) => {
  t.same(adminPaths(gateway), [
    '/external/cache/{cacheType}/{cacheTarget}/evict',
    '/model/insertModel',
    '/notify',
    '/subscription/*',
    '/user/*',
  ])
})

t.test('every page that lists the admin endpoints lists exactly those of the gateway document', async (t) => {
  const expected = adminPaths(gateway)
  for (const [name, text] of pages) {
    const found = listings(text)
    t.ok(found.length > 0, `${name} lists the admin endpoints`)
    for (const listing of found) t.same(listing, expected, `${name}'s listing`)
  }
})

t.test('the served intros name no document that is not in the repository', async (t) => {
  for (const name of ['gateway', 'engine']) t.notMatch(served(name).info.description, /\b(SPEC|DESIGN|MODEL)\.md\b/, `${name} intro`)
})
