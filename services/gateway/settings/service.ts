/**
 * UI settings files (SPEC.md "Settings and cache", DESIGN.md §6): the app comes from the page that
 * loads the script (the `referer`), the file from the app's `settings` models, and the answer is a
 * script that assigns it. The JSON is embedded so that no value can end the script early or break
 * the JavaScript string it sits in (`</script>`, U+2028, U+2029).
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { GatewayErrorCode } from '../../../openapi/generated/errors.js'
import type { ErrorFactory } from '../../../plugins/errors/service-error.js'
import type { ModelService } from '../models/service.js'

declare module 'fastify' {
  interface FastifyInstance {
    settings: SettingsService
  }
}

export const SETTINGS_GLOBAL = 'window.__WORKFLOW_SETTINGS__'

/** JSON that is also safe inside an HTML `<script>` element and in any JavaScript source. */
export function scriptSafeJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

export function settingsScript(file: string, content: unknown): string {
  return `${SETTINGS_GLOBAL} = ${SETTINGS_GLOBAL} || {}; ${SETTINGS_GLOBAL}[${scriptSafeJson(file)}] = ${scriptSafeJson(content)};`
}

/** `q` = base64url of `<appId>|<processId>|<processInstanceId>` (DESIGN.md §6): its app id. */
export function appIdFromCompositeId(q: string): string | undefined {
  const decoded = Buffer.from(q, 'base64url').toString('utf8')
  const [appId, ...rest] = decoded.split('|')
  return rest.length > 0 && appId ? appId : undefined
}

export class SettingsService {
  constructor(
    private readonly models: ModelService,
    private readonly fail: ErrorFactory<GatewayErrorCode>,
  ) {}

  /** The app of the page: its `appId` query parameter, else its `processId`'s app, else its `q`'s. */
  async appIdOf(referer: string | undefined): Promise<string | undefined> {
    if (!referer) return undefined
    let query: URLSearchParams
    try {
      query = new URL(referer).searchParams
    } catch {
      return undefined
    }
    const appId = query.get('appId')
    if (appId) return appId
    const processId = query.get('processId')
    if (processId) return (await this.models.appOfProcess(processId)) ?? undefined
    const q = query.get('q')
    return q ? appIdFromCompositeId(q) : undefined
  }

  async script(file: string, referer: string | undefined): Promise<string> {
    const appId = await this.appIdOf(referer)
    if (appId === undefined)
      throw this.fail('fm3027', { args: ['the appId could not be resolved from the referer'], parameters: { field: 'headers.referer' } })
    const files = await this.models.settingsFiles(appId)
    if (!files.has(file))
      throw this.fail('fm3027', { args: [`settings file ${file} of app ${appId}`], parameters: { field: 'params.file' } })
    return settingsScript(file, files.get(file))
  }
}

async function settingsServicePlugin(fastify: FastifyInstance): Promise<void> {
  fastify.decorate('settings', new SettingsService(fastify.modelService, fastify.fail))
}

export default fp(settingsServicePlugin, { name: 'settings-service', dependencies: ['model-service', 'errors'] })
