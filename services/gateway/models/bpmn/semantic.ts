/**
 * A process model as BPMN 2.0 elements (docs/reference/models.md#bpmn-export), built with
 * bpmn-moddle: a start event before the model's `start` step, one flow node per step (the
 * STEP_ELEMENTS table: one entry per step type, a plain `bpmn:Task` for a type it does not know), a
 * sequence flow for every way from one step to another, named after its condition, and the lane
 * each flow node belongs to.
 */
import type { BpmnModdle, ModdleElement } from 'bpmn-moddle'

/** A step as the export reads it: its type, and whatever fields that type has. */
export interface StepLike {
  type: string
  [field: string]: unknown
}

/** The part of a process model body the export reads. */
export interface ProcessBodyLike {
  processId?: string
  name?: string
  start: string
  steps: Record<string, StepLike>
  swimlanes?: Record<string, { name?: string }>
}

/** A way out of a step: the step it leads to, the condition it is named after, and whether it is a switch's default. */
export interface FlowOut {
  target: string
  name?: string
  isDefault?: boolean
}

/** How one step type becomes BPMN: its element (type, attributes, event definition) and its flows out. */
interface StepMapping {
  type: string
  attributes?: (step: StepLike) => Record<string, unknown>
  eventDefinition?: string
  /** The element's name when the step has none of its own. */
  name?: (step: StepLike, stepId: string) => string
  flows?: (step: StepLike) => FlowOut[]
}

const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined)
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : [])
const record = (value: unknown): Record<string, unknown> =>
  typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {}

/** The flow of a step that goes on to `next` (also the fallback of a step type the table does not know). */
const toNext = (step: StepLike): FlowOut[] => {
  const target = text(step.next)
  return target === undefined ? [] : [{ target }]
}

/** External tasks carry Camunda's attributes, which Camunda Modeler shows (a namespace declared on the definitions). */
export const CAMUNDA_NAMESPACE = 'http://camunda.org/schema/1.0/bpmn'

/** One entry per step type (docs/models.md): the BPMN element users expect of it. */
const STEP_ELEMENTS: Record<string, StepMapping> = {
  userTask: {
    type: 'bpmn:UserTask',
    flows: (step) =>
      list(step.actions)
        .map(record)
        .filter((action) => text(action.next) !== undefined)
        .map((action) => ({ target: text(action.next) as string, name: text(action.customType) ?? text(action.actionType) ?? 'complete' })),
  },
  function: { type: 'bpmn:ServiceTask', name: (step, stepId) => text(step.function) ?? stepId, flows: toNext },
  switch: {
    type: 'bpmn:ExclusiveGateway',
    flows: (step) => [
      ...list(step.cases)
        .map(record)
        .filter((entry) => text(entry.next) !== undefined)
        .map((entry) => ({ target: text(entry.next) as string, name: text(entry.when) ?? '' })),
      ...(text(step.default) === undefined ? [] : [{ target: text(step.default) as string, name: 'default', isDefault: true }]),
    ],
  },
  parallel: {
    type: 'bpmn:ParallelGateway',
    attributes: () => ({ gatewayDirection: 'Diverging' }),
    flows: (step) =>
      list(step.branches)
        .map(text)
        .filter((target) => target !== undefined)
        .map((target) => ({ target })),
  },
  join: { type: 'bpmn:ParallelGateway', attributes: () => ({ gatewayDirection: 'Converging' }), flows: toNext },
  end: { type: 'bpmn:EndEvent', name: (step, stepId) => text(step.status) ?? stepId },
  timer: { type: 'bpmn:IntermediateCatchEvent', eventDefinition: 'bpmn:TimerEventDefinition', flows: toNext },
  receive: { type: 'bpmn:IntermediateCatchEvent', eventDefinition: 'bpmn:MessageEventDefinition', flows: toNext },
  callProcess: {
    type: 'bpmn:CallActivity',
    attributes: (step) => (text(step.processId) === undefined ? {} : { calledElement: text(step.processId) }),
    flows: toNext,
  },
  externalTask: {
    type: 'bpmn:ServiceTask',
    attributes: (step) => ({
      $attrs: { 'camunda:type': 'external', ...(text(step.topic) === undefined ? {} : { 'camunda:topic': text(step.topic) as string }) },
    }),
    flows: toNext,
  },
}

const UNKNOWN_STEP: StepMapping = { type: 'bpmn:Task', flows: toNext }

/** The mapping of a step type: its table entry, or a plain task, so a new step type never breaks the export. */
export function mappingOf(type: string): Readonly<StepMapping> {
  return Object.hasOwn(STEP_ELEMENTS, type) ? (STEP_ELEMENTS[type] as StepMapping) : UNKNOWN_STEP
}

/** The flows out of a step. */
export function flowsOut(step: StepLike): FlowOut[] {
  return mappingOf(step.type).flows?.(step) ?? []
}

/** An XML id (an NCName) for each step id: `Step_` and the id, other characters as `_`, made unique. */
export function stepElementIds(stepIds: readonly string[]): Map<string, string> {
  const ids = new Map<string, string>()
  const taken = new Set<string>()
  for (const stepId of stepIds) {
    const base = `Step_${stepId.replace(/[^A-Za-z0-9_.-]/g, '_')}`
    let id = base
    for (let suffix = 2; taken.has(id); suffix++) id = `${base}_${suffix}`
    taken.add(id)
    ids.set(stepId, id)
  }
  return ids
}

export const START_EVENT_ID = 'StartEvent'
export const PROCESS_ID = 'Process'

export interface SemanticModel {
  definitions: ModdleElement
  process: ModdleElement
  /** Flow nodes by element id. */
  nodes: Map<string, ModdleElement>
  /** The swimlane of each user task (element id → swimlane id). */
  swimlaneOf: Map<string, string>
}

/** Wires a sequence flow between two flow nodes (both ends know it, as BPMN tools and the layout expect). */
function connect(moddle: BpmnModdle, id: string, source: ModdleElement, target: ModdleElement, name: string | undefined): ModdleElement {
  const flow = moddle.create('bpmn:SequenceFlow', { id, sourceRef: source, targetRef: target, ...(name ? { name } : {}) })
  ;(source.outgoing as ModdleElement[]).push(flow)
  ;(target.incoming as ModdleElement[]).push(flow)
  return flow
}

/** The process model's BPMN definitions, without diagram information. */
export function semanticModel(moddle: BpmnModdle, modelID: string, body: ProcessBodyLike): SemanticModel {
  const stepIds = Object.keys(body.steps)
  const elementIds = stepElementIds(stepIds)
  const nodes = new Map<string, ModdleElement>()
  const swimlaneOf = new Map<string, string>()
  const start = moddle.create('bpmn:StartEvent', { id: START_EVENT_ID, name: 'start', incoming: [], outgoing: [] })
  nodes.set(START_EVENT_ID, start)
  for (const stepId of stepIds) {
    const step = body.steps[stepId] as StepLike
    const mapping = mappingOf(step.type)
    const id = elementIds.get(stepId) as string
    const node = moddle.create(mapping.type, {
      id,
      name: text(step.name) ?? mapping.name?.(step, stepId) ?? stepId,
      incoming: [],
      outgoing: [],
      ...mapping.attributes?.(step),
      ...(mapping.eventDefinition ? { eventDefinitions: [moddle.create(mapping.eventDefinition, { id: `${id}_definition` })] } : {}),
    })
    nodes.set(id, node)
    if (step.type === 'userTask' && text(step.swimlane) !== undefined) swimlaneOf.set(id, step.swimlane as string)
  }

  const flows: ModdleElement[] = []
  const flow = (source: ModdleElement, target: ModdleElement, name?: string) => {
    const created = connect(moddle, `Flow_${flows.length + 1}`, source, target, name)
    flows.push(created)
    return created
  }
  const first = nodes.get(elementIds.get(body.start) ?? '')
  if (first) flow(start, first)
  for (const stepId of stepIds) {
    const source = nodes.get(elementIds.get(stepId) as string) as ModdleElement
    for (const out of flowsOut(body.steps[stepId] as StepLike)) {
      const target = nodes.get(elementIds.get(out.target) ?? '')
      // A flow to a step the model does not have (validation refuses them) is left out rather than failing the export.
      if (!target) continue
      const created = flow(source, target, out.name)
      if (out.isDefault) source.default = created
    }
  }

  const process = moddle.create('bpmn:Process', {
    id: PROCESS_ID,
    name: text(body.name) ?? body.processId ?? modelID,
    isExecutable: true,
    flowElements: [...nodes.values(), ...flows],
  })
  const usesCamunda = Object.values(body.steps).some((step) => step.type === 'externalTask')
  const definitions = moddle.create('bpmn:Definitions', {
    id: 'Definitions',
    name: modelID,
    targetNamespace: 'http://bpmn.io/schema/bpmn',
    exporter: 'workflow-service',
    rootElements: [process],
    ...(usesCamunda ? { $attrs: { 'xmlns:camunda': CAMUNDA_NAMESPACE } } : {}),
  })
  return { definitions, process, nodes, swimlaneOf }
}
