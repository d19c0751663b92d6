/**
 * `GET /model/getModel/:id/bpmn` (docs/reference/models.md#bpmn-export): a process model as BPMN 2.0
 * XML with its diagram. The semantic model is built with bpmn-moddle (semantic.ts), laid out by
 * bpmn-auto-layout, then given its lanes (lanes.ts). The gateway runs it in a worker thread
 * (isolated.ts). A model version never changes, so each version's export is kept (ExportCache)
 * and computed once.
 */
import { BpmnModdle, type ModdleElement } from 'bpmn-moddle'
import { layoutProcess } from 'bpmn-auto-layout'
import { exportIsolated } from './isolated.js'
import { addLanes, lanesOfNodes } from './lanes.js'
import { type ProcessBodyLike, START_EVENT_ID, semanticModel } from './semantic.js'

/** The swimlanes that hold a user task, declared ones first in their order, with their names. */
function usedSwimlanes(body: ProcessBodyLike, used: Iterable<string>): Array<{ id: string; name: string }> {
  const inUse = new Set(used)
  const declared = Object.keys(body.swimlanes ?? {}).filter((id) => inUse.has(id))
  const undeclared = [...inUse].filter((id) => !declared.includes(id))
  return [...declared, ...undeclared].map((id) => ({ id, name: body.swimlanes?.[id]?.name ?? id }))
}

/** The BPMN 2.0 XML of a process model body. */
export async function exportBpmn(modelID: string, body: ProcessBodyLike): Promise<string> {
  const moddle = new BpmnModdle()
  const model = semanticModel(moddle, modelID, body)
  const { xml } = await moddle.toXML(model.definitions)
  const laidOut = await moddle.fromXML(await layoutProcess(xml))
  const swimlanes = usedSwimlanes(body, model.swimlaneOf.values())
  if (swimlanes.length > 0) {
    // The nodes as the laid-out document holds them: the lanes are computed on its elements.
    const nodes = new Map<string, ModdleElement>()
    for (const id of model.nodes.keys()) {
      const node = laidOut.elementsById[id]
      if (node) nodes.set(id, node)
    }
    const laneOfNode = lanesOfNodes(nodes, START_EVENT_ID, model.swimlaneOf)
    addLanes({ moddle, definitions: laidOut.rootElement, laneOfNode, swimlanes })
  }
  return (await moddle.toXML(laidOut.rootElement, { format: true })).xml
}

/** How many model versions' exports are kept. */
const KEPT_EXPORTS = 100

/**
 * The exports of the model versions asked for last, by a key naming the tenant and the version (its
 * ETag); the one asked for longest ago is dropped first. A failed export is not kept.
 */
export class ExportCache {
  private readonly exports = new Map<string, Promise<string>>()

  get(key: string, modelID: string, body: ProcessBodyLike): Promise<string> {
    const cached = this.exports.get(key) ?? exportIsolated({ modelID, body })
    // Asked again: it moves to the end of the order of removal.
    this.exports.delete(key)
    this.exports.set(key, cached)
    if (this.exports.size > KEPT_EXPORTS) this.exports.delete(this.exports.keys().next().value as string)
    cached.catch(() => this.exports.delete(key))
    return cached
  }
}
