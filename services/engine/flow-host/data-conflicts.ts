/**
 * A request's data writes refused when stored, by a unique index whose key the run checked and did
 * not see (UnitOfWork.refusedBy): another request stored it in between. That is a lost race, not
 * an engine failure: 409 wm3043, stored nothing, and the retried request's run sees the other
 * document and answers as the model says (docs/reference/data.md#unique-indexes).
 */
import type { EngineErrorCode } from '../../../openapi/generated/errors.js'
import type { ErrorFactory } from '../../../plugins/errors/service-error.js'
import { dataCollectionModelId } from '../../../store/tenant.js'
import type { UnitOfWork } from './unit-of-work.js'

/** Runs `store`, which applies the unit of work's writes, answering a unique index's refusal of them as 409 wm3043. */
export async function storingDataWrites<T>(fail: ErrorFactory<EngineErrorCode>, work: UnitOfWork, store: () => Promise<T>): Promise<T> {
  try {
    return await store()
  } catch (error) {
    const collection = work.refusedBy(error)
    if (collection === undefined) throw error
    const modelID = dataCollectionModelId(collection)
    throw fail('wm3043', { args: [`a unique index of data collection ${modelID}`], parameters: { collection: modelID }, cause: error })
  }
}
