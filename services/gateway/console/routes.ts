/**
 * The console (docs/console.md): `GET /console` answers its page and `GET /console/:file` the files of
 * its bundle (built into dist/console/ by scripts/build/console.mjs), every answer with a
 * Content-Security-Policy that lets the page load scripts, styles and data from this origin only —
 * no inline script or style, no framing (docs/console.md#security). Public: the page and bundle hold
 * no data and no secret; every call the console makes is authenticated as any client's.
 */
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import fastifyStatic from '@fastify/static'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyReply } from 'fastify'
import fp from 'fastify-plugin'
import type { AuthMode } from '../../../lib/config/config.js'
import { repoRoot } from '../../../lib/server/paths.js'
import { routeFrom } from '../../../lib/server/route.js'
import { getConsoleFile, getConsolePage } from '../../../openapi/generated/gateway-routes.js'

/** Where `make build` puts the console's bundle. */
export const CONSOLE_BUNDLE_DIR = join(repoRoot, 'dist', 'console')

export const CONSOLE_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  // bpmn-js's styles carry their icons and fonts as data: URLs.
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')

const PAGE = 'index.html'
const AUTH_MODE_META = /<meta name="workflow-auth-mode" content="[a-z]*" \/>/

export interface ConsoleRoutesOptions {
  authMode: AuthMode
  /** The built bundle; CONSOLE_BUNDLE_DIR by default. */
  bundleDir?: string
}

async function consoleRoutes(fastify: FastifyInstance, options: ConsoleRoutesOptions): Promise<void> {
  const bundleDir = options.bundleDir ?? CONSOLE_BUNDLE_DIR
  const notBuilt = (what: string): Error =>
    fastify.fail('wm3180', { args: [`${what} (the console is built by \`make build\`)`], parameters: { field: 'params.file' } })
  // The bundle does not change while the gateway runs: its page and file list are read once.
  let page: Promise<string> | undefined
  let files: Promise<Set<string>> | undefined
  const readPage = async (): Promise<string> => {
    const html = await readFile(join(bundleDir, PAGE), 'utf8')
    return html.replace(AUTH_MODE_META, `<meta name="workflow-auth-mode" content="${options.authMode}" />`)
  }
  const listFiles = async (): Promise<Set<string>> => new Set((await readdir(bundleDir)).filter((name) => name !== PAGE))
  const secured = (reply: FastifyReply): FastifyReply =>
    reply
      .header('content-security-policy', CONSOLE_CONTENT_SECURITY_POLICY)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('cache-control', 'no-cache')

  // The static plugin in a context of its own, so its reply decorator meets no other (Swagger UI has one too).
  await fastify.register(async (scope) => {
    await scope.register(fastifyStatic, { root: bundleDir, serve: false })
    const typed = scope.withTypeProvider<TypeBoxTypeProvider>()

    typed.route({
      ...routeFrom(getConsolePage),
      handler: async (_request, reply) => {
        page ??= readPage()
        const html = await page.catch(() => {
          page = undefined
          throw notBuilt('the page')
        })
        // x-raw: the success answer is the page, not one of the documented (error) schemas.
        const raw: FastifyReply = secured(reply)
        return raw.type('text/html; charset=utf-8').send(html)
      },
    })

    typed.route({
      ...routeFrom(getConsoleFile),
      handler: async (request, reply) => {
        files ??= listFiles()
        const known = await files.catch(() => {
          files = undefined
          return new Set<string>()
        })
        if (!known.has(request.params.file)) throw notBuilt(request.params.file)
        const raw: FastifyReply = secured(reply)
        return raw.sendFile(request.params.file, { cacheControl: false })
      },
    })
  })
}

export default fp(consoleRoutes, { name: 'console-routes' })
