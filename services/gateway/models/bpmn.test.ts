/**
 * `GET /model/getModel/:id/bpmn` through the gateway: every example process model exports as BPMN
 * 2.0 that bpmn-moddle reads without a warning, with every step as the right element, every flow
 * named after its condition, lanes for the swimlanes and a shape or edge for every element; a step
 * type the export does not know is a plain task; tenants and missing models as getModel.
 */
import { readdirSync } from 'node:fs'
import { BpmnModdle, type ModdleElement } from 'bpmn-moddle'
import t from 'tap'
import type { ProcessModelBody } from '../../../model/types.js'
import { startGateway } from '../../testing/gateway.js'
import { deployExample, EXAMPLES_DIR, readExample } from '../../testing/models.js'
import { createTestUser } from '../../testing/users.js'
import { flowsOut, type StepLike, stepElementIds } from './bpmn/semantic.js'

const HR = { appId: 'hr', organizationId: 'acme' }
const READER = 'bpmn-reader'

const EXPECTED_TYPE: Record<string, string> = {
  userTask: 'bpmn:UserTask',
  function: 'bpmn:ServiceTask',
  switch: 'bpmn:ExclusiveGateway',
  parallel: 'bpmn:ParallelGateway',
  join: 'bpmn:ParallelGateway',
  end: 'bpmn:EndEvent',
  timer: 'bpmn:IntermediateCatchEvent',
  receive: 'bpmn:IntermediateCatchEvent',
  callProcess: 'bpmn:CallActivity',
  externalTask: 'bpmn:ServiceTask',
}

const processExamples = readdirSync(EXAMPLES_DIR)
  .filter((file) => file.endsWith('.json'))
  .map((file) => file.slice(0, -'.json'.length))
  .filter((name) => readExample(name).type === 'process')

async function startWithExamples(t: Parameters<typeof startGateway>[0]) {
  const started = await startGateway(t)
  const store = started.gateway.app.store
  for (const file of readdirSync(EXAMPLES_DIR).filter((name) => name.endsWith('.json')))
    await deployExample(store, file.slice(0, -'.json'.length), HR)
  await createTestUser(store, { ...HR, userId: READER, fullName: 'Bpmn Reader' })
  return started
}

async function fetchBpmn(url: string, modelID: string, headers: Record<string, string> = { user: READER }, query = '') {
  const response = await fetch(`${url}/model/getModel/${modelID}/bpmn${query}`, { headers })
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    disposition: response.headers.get('content-disposition'),
    text: await response.text(),
  }
}

/** The elements of the diagram's plane, by the id of the element each shows. */
function diagramOf(definitions: ModdleElement): Map<string, ModdleElement> {
  const plane = ((definitions.diagrams as ModdleElement[])[0] as ModdleElement).plane as ModdleElement
  return new Map((plane.planeElement as ModdleElement[]).map((element) => [(element.bpmnElement as ModdleElement).id as string, element]))
}

t.test('every example process model exports as BPMN 2.0 with every step, flow, lane and its diagram', async (t) => {
  const { gateway } = await startWithExamples(t)
  t.ok(processExamples.length >= 2, `the examples hold process models: ${processExamples.join(', ')}`)
  for (const name of processExamples) {
    const example = readExample(name)
    const body = example.modelBody as unknown as ProcessModelBody
    const answer = await fetchBpmn(gateway.url, example.modelID)
    t.equal(answer.status, 200, `${name}: 200`)
    t.match(answer.type, /^application\/xml/)
    t.equal(answer.disposition, `inline; filename="${example.modelID}.bpmn"`)
    const { rootElement: definitions, warnings, elementsById } = await new BpmnModdle().fromXML(answer.text)
    t.same(warnings, [], `${name}: bpmn-moddle reads it without a warning`)
    const process = (definitions.rootElements as ModdleElement[]).find((element) => element.$type === 'bpmn:Process') as ModdleElement
    const diagram = diagramOf(definitions)

    const ids = stepElementIds(Object.keys(body.steps))
    for (const [stepId, step] of Object.entries(body.steps)) {
      const element = elementsById[ids.get(stepId) as string]
      t.equal(element?.$type, EXPECTED_TYPE[step.type], `${name}: step ${stepId} (${step.type}) is a ${EXPECTED_TYPE[step.type]}`)
      t.equal(diagram.get(element?.id as string)?.$type, 'bpmndi:BPMNShape', `${name}: step ${stepId} has a shape`)
      const outgoing = ((element?.outgoing as ModdleElement[] | undefined) ?? []).map((flow) => ({
        target: (flow.targetRef as ModdleElement).id,
        name: flow.name,
      }))
      const expected = flowsOut(step as unknown as StepLike).map((flow) => ({ target: ids.get(flow.target), name: flow.name }))
      t.same(outgoing, expected, `${name}: the flows out of ${stepId}, named after their conditions`)
    }
    const start = (process.flowElements as ModdleElement[]).find((element) => element.$type === 'bpmn:StartEvent') as ModdleElement
    t.equal(
      ((start.outgoing as ModdleElement[])[0]?.targetRef as ModdleElement).id,
      ids.get(body.start),
      `${name}: the start event leads to the start step`,
    )
    t.ok(diagram.get(start.id as string), `${name}: the start event has a shape`)

    const flows = (process.flowElements as ModdleElement[]).filter((element) => element.$type === 'bpmn:SequenceFlow')
    const modelFlows = Object.values(body.steps).reduce((count, step) => count + flowsOut(step as unknown as StepLike).length, 1)
    t.equal(flows.length, modelFlows, `${name}: one sequence flow for every flow of the model, and the start's`)
    t.ok(
      flows.every(
        (flow) =>
          diagram.get(flow.id as string)?.$type === 'bpmndi:BPMNEdge' &&
          (diagram.get(flow.id as string)?.waypoint as unknown[]).length >= 2,
      ),
      `${name}: every flow has an edge`,
    )
    const swimlanes = new Set(Object.values(body.steps).flatMap((step) => (step.type === 'userTask' ? [step.swimlane] : [])))
    const lanes = ((process.laneSets as ModdleElement[] | undefined)?.[0]?.lanes as ModdleElement[] | undefined) ?? []
    t.equal(lanes.length, swimlanes.size, `${name}: a lane per swimlane of its user tasks`)
    for (const lane of lanes) t.ok(diagram.get(lane.id as string), `${name}: lane ${lane.name as string} has a shape`)
    const inLanes = lanes.flatMap((lane) => (lane.flowNodeRef as ModdleElement[]).map((node) => node.id))
    t.equal(
      new Set(inLanes).size,
      (process.flowElements as ModdleElement[]).length - flows.length,
      `${name}: every flow node is in one lane`,
    )
    for (const [stepId, step] of Object.entries(body.steps)) {
      if (step.type !== 'userTask') continue
      const lane = lanes.find((candidate) => (candidate.flowNodeRef as ModdleElement[]).some((node) => node.id === ids.get(stepId)))
      t.equal(lane?.name, body.swimlanes?.[step.swimlane]?.name ?? step.swimlane, `${name}: ${stepId} is in its swimlane's lane`)
    }
  }
})

t.test('a step type the export does not know is a plain task, and its next step still follows', async (t) => {
  const { gateway } = await startWithExamples(t)
  // Nothing has read the model yet, so no cache holds it.
  const unknownStep: StepLike = { type: 'somethingNew', name: 'Book it', next: 'archive' }
  const stored = gateway.app.store.collection('models')
  // The gateway validates step types on insert: a model of a later release is written to the store as it would be.
  await stored.updateMany({ modelID: 'leave-request', ...HR }, { $set: { 'modelBody.steps.book': unknownStep } })
  const answer = await fetchBpmn(gateway.url, 'leave-request')
  t.equal(answer.status, 200)
  const { elementsById, warnings } = await new BpmnModdle().fromXML(answer.text)
  t.same(warnings, [])
  t.match(elementsById.Step_book, { $type: 'bpmn:Task', name: 'Book it' })
  t.equal(((elementsById.Step_book?.outgoing as ModdleElement[])[0]?.targetRef as ModdleElement).id, 'Step_archive')
})

t.test('the same tenant checks as getModel: other tenants, unknown and non-process models are 404, nobody is 401', async (t) => {
  const { gateway } = await startWithExamples(t)
  await createTestUser(gateway.app.store, { appId: 'hr', organizationId: 'globex', userId: 'globex-reader', fullName: 'Globex Reader' })
  const notFound = (answer: { status: number; text: string }) => answer.status === 404 && JSON.parse(answer.text).error.code === 'fm3027'
  t.ok(notFound(await fetchBpmn(gateway.url, 'leave-request', { user: 'globex-reader' })), 'another organization with the same app id')
  t.ok(notFound(await fetchBpmn(gateway.url, 'no-such-model')), 'an unknown model')
  t.ok(notFound(await fetchBpmn(gateway.url, 'leave-form')), 'a form model has no BPMN')
  const anonymous = await fetchBpmn(gateway.url, 'leave-request', {}, '?appId=hr&organizationId=acme')
  t.equal(anonymous.status, 401)
  t.notMatch(anonymous.text, /bookLeave/)
  t.equal((await fetchBpmn(gateway.url, 'bad id!')).status, 400, 'a malformed model id')
})

t.test('a model of more steps than an export takes is 422 wm3160, in the envelope', async (t) => {
  const { gateway } = await startWithExamples(t)
  const steps: Record<string, StepLike> = {}
  for (let index = 0; index < 1001; index++) steps[`s${index}`] = { type: 'end' }
  await gateway.app.store.collection('models').updateMany({ modelID: 'purchase', ...HR }, { $set: { 'modelBody.steps': steps } })
  const answer = await fetchBpmn(gateway.url, 'purchase')
  t.equal(answer.status, 422)
  t.match(JSON.parse(answer.text), { status: 'customerror', error: { code: 'wm3160', message: /purchase.*1001 steps, more than 1000/ } })
})
