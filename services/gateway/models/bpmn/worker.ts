/**
 * The BPMN export's worker thread (isolated.ts): lays out one model off the gateway's thread and
 * posts its XML, or the message of what failed.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { exportBpmn } from './export.js'
import type { ExportRequest, ExportAnswer } from './isolated.js'

const { modelID, body } = workerData as ExportRequest
const answer: ExportAnswer = await exportBpmn(modelID, body).then(
  (xml) => ({ xml }),
  (error: unknown) => ({ error: error instanceof Error ? error.message : String(error) }),
)
parentPort?.postMessage(answer)
