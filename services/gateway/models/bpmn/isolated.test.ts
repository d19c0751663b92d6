/** The export's worker thread: the XML of the export itself, and a layout past its time or a model past the step limit refused. */
import t from 'tap'
import { readExample } from '../../../testing/models.js'
import { exportBpmn } from './export.js'
import { ExportRefused, exportIsolated, MAX_EXPORTED_STEPS } from './isolated.js'
import type { ProcessBodyLike } from './semantic.js'

const leaveRequest = readExample('leave-request')
const body = leaveRequest.modelBody as unknown as ProcessBodyLike

t.test('the worker answers what the export answers on the calling thread', async (t) => {
  t.equal(await exportIsolated({ modelID: 'leave-request', body }), await exportBpmn('leave-request', body))
})

t.test('a layout that runs past its time is terminated and refused', async (t) => {
  // No worker starts and lays out a model within a millisecond: the time runs out first.
  await t.rejects(exportIsolated({ modelID: 'leave-request', body }, 1), ExportRefused)
  await t.rejects(exportIsolated({ modelID: 'leave-request', body }, 1), { message: 'its layout took longer than 1 ms' })
})

t.test('a model with more steps than an export takes is refused before any work', async (t) => {
  const steps: ProcessBodyLike['steps'] = {}
  for (let index = 0; index <= MAX_EXPORTED_STEPS; index++) steps[`s${index}`] = { type: 'end' }
  await t.rejects(exportIsolated({ modelID: 'huge', body: { start: 's0', steps } }, 1), {
    name: 'ExportRefused',
    message: `it has ${MAX_EXPORTED_STEPS + 1} steps, more than ${MAX_EXPORTED_STEPS}`,
  })
})
