/**
 * A tenant's model is laid out off the gateway's thread (docs/reference/models.md#bpmn-export): the
 * layout's cost grows faster than the model, so a large model could otherwise hold every request
 * of the gateway. Each export runs in a worker thread of its own, with a memory ceiling, and is
 * terminated when it runs past its time; a model with more steps than an export takes is refused
 * before any work.
 */
import { Worker } from 'node:worker_threads'
import type { ProcessBodyLike } from './semantic.js'

export interface ExportRequest {
  modelID: string
  body: ProcessBodyLike
}

export type ExportAnswer = { xml: string } | { error: string }

/** The most steps a model may have to be exported (the examples have a dozen). */
export const MAX_EXPORTED_STEPS = 1000
/** How long one export may run in its worker. */
export const EXPORT_TIMEOUT_MS = 15_000
const WORKER_HEAP_MB = 256

const EXPORT_WORKER = new URL('./worker.js', import.meta.url)

/** Why a model was not exported: too many steps, or its layout ran out of time or memory. */
export class ExportRefused extends Error {
  override readonly name = 'ExportRefused'
}

/** The BPMN XML of the model, laid out in a worker thread within `timeoutMs`. */
export async function exportIsolated(request: ExportRequest, timeoutMs = EXPORT_TIMEOUT_MS): Promise<string> {
  const steps = Object.keys(request.body.steps ?? {}).length
  if (steps > MAX_EXPORTED_STEPS) throw new ExportRefused(`it has ${steps} steps, more than ${MAX_EXPORTED_STEPS}`)
  const worker = new Worker(EXPORT_WORKER, { workerData: request, resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB } })
  let timer: NodeJS.Timeout | undefined
  try {
    const answer = await new Promise<ExportAnswer>((resolve, reject) => {
      timer = setTimeout(() => reject(new ExportRefused(`its layout took longer than ${timeoutMs} ms`)), timeoutMs)
      worker.once('message', (message: ExportAnswer) => resolve(message))
      worker.once('error', (error) =>
        reject(
          (error as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? new ExportRefused(`its layout needed more than ${WORKER_HEAP_MB} MB`)
            : error,
        ),
      )
      worker.once('exit', (code) => reject(new Error(`the BPMN export worker ended (exit code ${code}) without an answer`)))
    })
    if ('error' in answer) throw new Error(`the BPMN export failed: ${answer.error}`)
    return answer.xml
  } finally {
    clearTimeout(timer)
    await worker.terminate()
  }
}
