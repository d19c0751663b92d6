/**
 * `POST /external/data/search/:collection` (DESIGN.md §6): one page of a business data collection,
 * found by its human-readable name in the request's app. The filter may only use the allow-listed
 * operators (400 wm3100), `$regex` patterns are bounded and must run in linear time (RE2; 400 wm4000
 * naming the field), and sort and projection name
 * plain fields.
 */
import type { DataSearchParams, DataSearchResult } from '../../../openapi/generated/schemas.js'
import type { ErrorFactory } from '../../../plugins/errors/service-error.js'
import type { Actor } from '../../../plugins/identity/plugin.js'
import { disallowedOperator, regexProblem } from '../flow-host/data-filter.js'
import type { DataCollectionRepository } from './repository.js'

export const DEFAULT_SEARCH_LIMIT = 50

export class DataSearchService {
  constructor(
    private readonly collections: DataCollectionRepository,
    private readonly fail: ErrorFactory<string>,
  ) {}

  async search(actor: Actor | null, name: string, params: DataSearchParams): Promise<DataSearchResult> {
    const appId = params.appId ?? actor?.appId
    if (appId === undefined) throw this.fail('wm3003', { args: ['give appId or the user header'], parameters: { field: 'body.appId' } })
    const filter = params.filter ?? {}
    const operator = disallowedOperator(filter)
    if (operator) throw this.fail('wm3100', { args: [operator], parameters: { field: 'body.filter', operator } })
    const regex = regexProblem(filter)
    if (regex) throw this.fail('wm4000', { args: [`body.${regex.path}: ${regex.problem}`], parameters: { field: `body.${regex.path}` } })
    for (const [field, spec] of [['body.sort', params.sort], ['body.projection', params.projection]] as const) {
      const bad = Object.keys(spec ?? {}).find((key) => key === '' || key.startsWith('$'))
      if (bad !== undefined) throw this.fail('wm4000', { args: [`${field} names no field: "${bad}"`], parameters: { field } })
    }
    // Another app's collections are invisible to a user, as unknown names are.
    const entry = actor && actor.appId !== appId ? null : await this.collections.find(appId, name)
    if (!entry) throw this.fail('wm3101', { args: [name], parameters: { collection: name } })
    const skip = params.skip ?? 0
    const limit = params.limit ?? DEFAULT_SEARCH_LIMIT
    const page = await this.collections.search(entry, { filter, sort: params.sort as Record<string, 1 | -1> | undefined, projection: params.projection as Record<string, 0 | 1> | undefined, skip, limit })
    return { ...page, skip, limit }
  }
}
