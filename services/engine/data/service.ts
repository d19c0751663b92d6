/**
 * `POST /external/data/search/:collection` (docs/reference/data.md#searching): one page of a business data collection
 * of the user's app, found by its human-readable name. The filter is checked before it runs: its
 * shape and operands (400 wm4000 naming the field), the allow-listed operators (400 wm3100), the
 * `$regex` patterns (400 wm4000), its size (400 wm3102 naming the bound); sort and projection name
 * plain fields. The search itself examines at most a budget of documents (422 wm3103 past it).
 */
import type { DataSearchParams, DataSearchResult } from '../../../openapi/generated/schemas.js'
import type { EngineErrorCode } from '../../../openapi/generated/errors.js'
import type { ErrorFactory } from '../../../plugins/errors/service-error.js'
import type { Actor } from '../../../plugins/identity/actor.js'
import { isScanBudgetExceededError } from '../../../store/port.js'
import {
  type DataLimits,
  examinedBudget,
  filterLimitProblem,
  filterProblem,
  regexProblem,
  searchBudgetProblem,
} from '../flow-host/data-filter.js'
import type { DataCollectionRepository } from './repository.js'

export const DEFAULT_SEARCH_LIMIT = 50

export class DataSearchService {
  constructor(
    private readonly collections: DataCollectionRepository,
    private readonly fail: ErrorFactory<EngineErrorCode>,
    private readonly limits: DataLimits,
  ) {}

  async search(actor: Actor, name: string, params: DataSearchParams): Promise<DataSearchResult> {
    const filter = params.filter ?? {}
    this.checkFilter(filter)
    for (const [field, spec] of [
      ['body.sort', params.sort],
      ['body.projection', params.projection],
    ] as const) {
      const bad = Object.keys(spec ?? {}).find((key) => key === '' || key.startsWith('$'))
      if (bad !== undefined) throw this.fail('wm4000', { args: [`${field} names no field: "${bad}"`], parameters: { field } })
    }
    // Another app's collections are invisible to the user, as unknown names are.
    const entry = params.appId !== undefined && params.appId !== actor.appId ? null : await this.collections.find(actor, name)
    if (!entry) throw this.fail('wm3101', { args: [name], parameters: { collection: name } })
    const skip = params.skip ?? 0
    const limit = params.limit ?? DEFAULT_SEARCH_LIMIT
    const maxExamined = examinedBudget(filter, this.limits)
    try {
      const page = await this.collections.search(entry, {
        filter,
        sort: params.sort as Record<string, 1 | -1> | undefined,
        projection: params.projection as Record<string, 0 | 1> | undefined,
        skip,
        limit,
        maxExamined,
      })
      return { ...page, skip, limit }
    } catch (error) {
      if (!isScanBudgetExceededError(error)) throw error
      const { limit: variable, message } = searchBudgetProblem(maxExamined, this.limits)
      throw this.fail('wm3103', { args: [variable, message], parameters: { limit: variable }, cause: error })
    }
  }

  /** The filter's shape and operators, then its regex patterns: each fault a 400 naming its field. */
  private checkFilter(filter: unknown): void {
    const problem = filterProblem(filter)
    if (problem?.operator)
      throw this.fail('wm3100', {
        args: [`${problem.operator} at ${problem.field}`],
        parameters: { field: problem.field, operator: problem.operator },
      })
    if (problem) throw this.fail('wm4000', { args: [problem.message], parameters: { field: problem.field } })
    // The bounds before the patterns: checking a pattern compiles it, so a thousand of them would cost
    // the engine's thread what the bounds are there to spare it.
    const bound = filterLimitProblem(filter, this.limits)
    if (bound) throw this.fail('wm3102', { args: [bound.limit, bound.message], parameters: { field: 'body.filter', limit: bound.limit } })
    const regex = regexProblem(filter)
    if (regex) throw this.fail('wm4000', { args: [`body.${regex.path}: ${regex.problem}`], parameters: { field: `body.${regex.path}` } })
  }
}
