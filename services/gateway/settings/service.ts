/**
 * UI settings files: the tenant comes from the page that loads the script (the `referer`, see
 * tenantOf), the file from the tenant's `settings` models, and the answer is a
 * script that assigns it. The JSON is embedded so that no value can end the script early or break
 * the JavaScript string it sits in (`</script>`, U+2028, U+2029).
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { GatewayErrorCode } from '../../../openapi/generated/errors.js'
import type { ErrorFactory } from '../../../plugins/errors/service-error.js'
import type { ModelService } from '../models/service.js'
import type { Tenant } from '../../../store/tenant.js'

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

/** `q` = base64url of `<appId>|<processId>|<processInstanceId>`: its app id. */
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

  /**
   * The tenant of the page. Its app: the `appId` query parameter, else its `processId`'s app, else
   * its `q`'s. Its organization: the `organizationId` query parameter, else the only organization
   * that has that app (none or several: unresolved, so one organization's settings are never served
   * for another's page).
   */
  async tenantOf(referer: string | undefined): Promise<Tenant | undefined> {
    if (!referer) return undefined
    let query: URLSearchParams
    try {
      query = new URL(referer).searchParams
    } catch {
      return undefined
    }
    const organizationId = query.get('organizationId') || undefined
    const processId = query.get('processId')
    const appId = query.get('appId') || (processId ? undefined : appIdFromCompositeId(query.get('q') ?? ''))
    if (!appId) return processId ? ((await this.models.tenantOfProcess(processId, organizationId)) ?? undefined) : undefined
    const organization = organizationId ?? (await this.models.onlyOrganizationOfApp(appId))
    return organization === null ? undefined : { organizationId: organization, appId }
  }

  async script(file: string, referer: string | undefined): Promise<string> {
    const tenant = await this.tenantOf(referer)
    if (tenant === undefined)
      throw this.fail('fm3027', {
        args: ['the tenant (organizationId and appId) could not be resolved from the referer'],
        parameters: { field: 'headers.referer' },
      })
    const files = await this.models.settingsFiles(tenant)
    if (!files.has(file))
      throw this.fail('fm3027', {
        args: [`settings file ${file} of app ${tenant.appId} in organization ${tenant.organizationId}`],
        parameters: { field: 'params.file' },
      })
    return settingsScript(file, files.get(file))
  }
}

async function settingsServicePlugin(fastify: FastifyInstance): Promise<void> {
  fastify.decorate('settings', new SettingsService(fastify.modelService, fastify.fail))
}

export default fp(settingsServicePlugin, { name: 'settings-service', dependencies: ['model-service', 'errors'] })
