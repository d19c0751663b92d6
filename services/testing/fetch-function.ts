/**
 * Test support for a flow function's outbound HTTP: the HR function library with a `fetch` function
 * added, and a user of the HR app who runs it.
 */
import type { StoredUser } from '../../store/collections.js'
import type { Store } from '../../store/port.js'
import { deployExample } from './models.js'
import { HR } from './tenant.js'
import { createTestUser } from './users.js'

/** GETs `input.url` and answers what came back (status, headers, body) in `output.answer`. */
const FETCH = { steps: [{ http: { method: 'GET', url: 'input.url' }, as: 'output.answer' }] }

/** Deploys the HR function library with `fetch` added; answers Ann, an employee of the HR app, to run it as. */
export async function deployFetchFunction(store: Store): Promise<StoredUser> {
  await deployExample(store, 'hr-lib', { ...HR, edit: (body) => Object.assign(body.functions as object, { fetch: FETCH }) })
  return createTestUser(store, { ...HR, fullName: 'Ann Employee', swimlanes: ['employee'] })
}
