/**
 * Lanes for the swimlanes (docs/reference/models.md#bpmn-export). bpmn-auto-layout lays out a
 * process's flow nodes but not lanes; BPMN tools draw lanes only inside a participant of a
 * collaboration. So the laid-out diagram gets a collaboration with one participant (the process), a
 * lane per swimlane, and its shapes are moved into their lane's band: each keeps its column (x), and
 * its row within the lane is its row of the layout among the lane's rows. The edges are then routed
 * again between the moved shapes.
 */
import type { BpmnModdle, ModdleElement } from 'bpmn-moddle'

interface Bounds {
  x: number
  y: number
  width: number
  height: number
}

const ROW_HEIGHT = 120
/** Room left of the flow nodes for the participant's and the lanes' names. */
const LABELS_WIDTH = 60
const MARGIN = 40

/**
 * The lane of every flow node: a user task's swimlane; any other node the lane of the node it is
 * first reached from (from the start event, breadth first); the start event the lane of the first
 * user task reached; a node reached from none, the first lane.
 */
export function lanesOfNodes(
  nodes: ReadonlyMap<string, ModdleElement>,
  startId: string,
  swimlaneOf: ReadonlyMap<string, string>,
): Map<string, string> {
  const lanes = new Map<string, string>()
  const order: string[] = []
  const parent = new Map<string, string>()
  const queue = [startId]
  const seen = new Set(queue)
  while (queue.length > 0) {
    const id = queue.shift() as string
    order.push(id)
    for (const flow of (nodes.get(id)?.outgoing as ModdleElement[] | undefined) ?? []) {
      const target = (flow.targetRef as ModdleElement).id as string
      if (seen.has(target)) continue
      seen.add(target)
      parent.set(target, id)
      queue.push(target)
    }
  }
  const firstLane = order.map((id) => swimlaneOf.get(id)).find((lane) => lane !== undefined) ?? [...swimlaneOf.values()][0]
  if (firstLane === undefined) return lanes
  for (const id of order) lanes.set(id, swimlaneOf.get(id) ?? lanes.get(parent.get(id) ?? '') ?? firstLane)
  for (const id of nodes.keys()) if (!lanes.has(id)) lanes.set(id, swimlaneOf.get(id) ?? firstLane)
  return lanes
}

function centerY(bounds: Bounds): number {
  return bounds.y + bounds.height / 2
}

/** Orthogonal waypoints from one shape to another: forward out of the right side, backward under both. */
function route(source: Bounds, target: Bounds): Array<{ x: number; y: number }> {
  const [sy, ty] = [centerY(source), centerY(target)]
  const [sourceRight, targetLeft] = [source.x + source.width, target.x]
  if (targetLeft > sourceRight) {
    if (sy === ty)
      return [
        { x: sourceRight, y: sy },
        { x: targetLeft, y: ty },
      ]
    const middle = Math.round((sourceRight + targetLeft) / 2)
    return [
      { x: sourceRight, y: sy },
      { x: middle, y: sy },
      { x: middle, y: ty },
      { x: targetLeft, y: ty },
    ]
  }
  const below = Math.max(source.y + source.height, target.y + target.height) + 20
  const [sx, tx] = [Math.round(source.x + source.width / 2), Math.round(target.x + target.width / 2)]
  return [
    { x: sx, y: source.y + source.height },
    { x: sx, y: below },
    { x: tx, y: below },
    { x: tx, y: target.y + target.height },
  ]
}

export interface LaneInput {
  moddle: BpmnModdle
  /** The laid-out definitions (with their diagram). */
  definitions: ModdleElement
  /** The lane of each flow node (element id → swimlane id), in lanesOfNodes' terms. */
  laneOfNode: ReadonlyMap<string, string>
  /** Each swimlane id with its display name, in lane order. */
  swimlanes: ReadonlyArray<{ id: string; name: string }>
}

/** Adds the collaboration, participant and lanes, and moves the shapes into their lanes. */
export function addLanes({ moddle, definitions, laneOfNode, swimlanes }: LaneInput): void {
  const rootElements = definitions.rootElements as ModdleElement[]
  const process = rootElements.find((element) => element.$type === 'bpmn:Process') as ModdleElement
  const plane = ((definitions.diagrams as ModdleElement[])[0] as ModdleElement).plane as ModdleElement
  const planeElements = plane.planeElement as ModdleElement[]
  const shapes = planeElements.filter((element) => element.$type === 'bpmndi:BPMNShape')
  const edges = planeElements.filter((element) => element.$type === 'bpmndi:BPMNEdge')
  const boundsOf = (shape: ModdleElement) => shape.bounds as Bounds
  const idOf = (shape: ModdleElement) => (shape.bpmnElement as ModdleElement).id as string

  // The layout's rows (shape centres) each lane uses, top to bottom.
  const rowsOfLane = new Map<string, number[]>(swimlanes.map((lane) => [lane.id, []]))
  for (const shape of shapes) {
    const rows = rowsOfLane.get(laneOfNode.get(idOf(shape)) ?? '')
    if (rows && !rows.includes(centerY(boundsOf(shape)))) rows.push(centerY(boundsOf(shape)))
  }
  for (const rows of rowsOfLane.values()) rows.sort((a, b) => a - b)

  const left = Math.min(...shapes.map((shape) => boundsOf(shape).x)) - LABELS_WIDTH - MARGIN / 2
  const right = Math.max(...shapes.map((shape) => boundsOf(shape).x + boundsOf(shape).width)) + MARGIN
  let top = 0
  const laneBounds = new Map<string, Bounds>()
  for (const lane of swimlanes) {
    const rows = rowsOfLane.get(lane.id) as number[]
    const height = Math.max(1, rows.length) * ROW_HEIGHT
    laneBounds.set(lane.id, { x: left + LABELS_WIDTH / 2, y: top, width: right - left - LABELS_WIDTH / 2, height })
    top += height
  }
  for (const shape of shapes) {
    const lane = laneOfNode.get(idOf(shape)) ?? ''
    const band = laneBounds.get(lane)
    if (!band) continue
    const bounds = boundsOf(shape)
    const row = (rowsOfLane.get(lane) as number[]).indexOf(centerY(bounds))
    bounds.y = Math.round(band.y + row * ROW_HEIGHT + ROW_HEIGHT / 2 - bounds.height / 2)
    delete shape.label
  }
  const shapeBounds = new Map(shapes.map((shape) => [idOf(shape), boundsOf(shape)]))
  for (const edge of edges) {
    const flow = edge.bpmnElement as ModdleElement
    const source = shapeBounds.get((flow.sourceRef as ModdleElement).id as string)
    const target = shapeBounds.get((flow.targetRef as ModdleElement).id as string)
    if (!source || !target) continue
    edge.waypoint = route(source, target).map((point) => moddle.create('dc:Point', point))
    delete edge.label
  }

  const lanes = swimlanes.map((lane) =>
    moddle.create('bpmn:Lane', {
      id: `Lane_${lane.id.replace(/[^A-Za-z0-9_.-]/g, '_')}`,
      name: lane.name,
      flowNodeRef: (process.flowElements as ModdleElement[]).filter(
        (element) => element.$type !== 'bpmn:SequenceFlow' && laneOfNode.get(element.id as string) === lane.id,
      ),
    }),
  )
  process.laneSets = [moddle.create('bpmn:LaneSet', { id: 'LaneSet', lanes })]
  const participant = moddle.create('bpmn:Participant', { id: 'Participant', name: process.name, processRef: process })
  const collaboration = moddle.create('bpmn:Collaboration', { id: 'Collaboration', participants: [participant] })
  definitions.rootElements = [collaboration, ...rootElements]
  plane.bpmnElement = collaboration
  const shape = (element: ModdleElement, bounds: Bounds) =>
    moddle.create('bpmndi:BPMNShape', {
      id: `${element.id as string}_di`,
      bpmnElement: element,
      isHorizontal: true,
      bounds: moddle.create('dc:Bounds', { ...bounds }),
    })
  plane.planeElement = [
    shape(participant, { x: left, y: 0, width: right - left, height: top }),
    ...lanes.map((lane, index) => shape(lane, laneBounds.get((swimlanes[index] as { id: string }).id) as Bounds)),
    ...planeElements,
  ]
}
