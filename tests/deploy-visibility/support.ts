/**
 * Test support for deploy visibility: deploys through a gateway and uses what was deployed with the
 * very next request, through every gateway given (each with an engine of its own behind it), and
 * answers every request that did not see the deploy.
 */
import { insertModelRequest } from '../../services/testing/models.js'
import { HR } from '../../services/testing/tenant.js'

export interface DeployStack {
  /** The gateway deploys go through. */
  deployUrl: string
  /** The gateways whose next request must see each deploy (the deploying one included). */
  gatewayUrls: string[]
  /** A user of the HR app in swimlane `employee`. */
  userId: string
}

interface Answer {
  status: number
  body: { status?: string; data?: unknown; error?: { code: string; message: string } } & Record<string, unknown>
}

async function send(url: string, method: 'GET' | 'POST', path: string, userId: string, body?: unknown): Promise<Answer> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { user: userId, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  return { status: response.status, body: (await response.json()) as Answer['body'] }
}

async function deploy(stack: DeployStack, example: string, edit: (body: Record<string, unknown>) => void): Promise<void> {
  const answer = await send(stack.deployUrl, 'POST', '/model/insertModel', stack.userId, insertModelRequest(example, { ...HR, edit }))
  if (answer.status !== 200) throw new Error(`insertModel ${example} answered ${answer.status}: ${JSON.stringify(answer.body)}`)
}

/** The name the round gives the leave bookings collection (the quick start's name before round 0). */
function bookingsName(round: number): string {
  return round < 0 ? 'Leave bookings' : `Leave bookings ${round}`
}

/**
 * The app's function library with a `deployProbe` function that answers the round it was deployed
 * in, and data probes that find in the bookings collection under the round's name and the name of
 * the round before.
 */
function probeLibrary(round: number): (body: Record<string, unknown>) => void {
  const findIn = (name: string) => ({ steps: [{ data: 'find', collection: name, filter: '{}', as: 'output.found' }] })
  return (body) => {
    const functions = body.functions as Record<string, unknown>
    functions.deployProbe = { steps: [{ set: { 'output.round': String(round) } }] }
    functions.bookingsProbe = findIn(bookingsName(round))
    functions.previousBookingsProbe = findIn(bookingsName(round - 1))
  }
}

/** Whether a function's run answered 200, and its error code when not. */
async function runs(gatewayUrl: string, userId: string, functionId: string): Promise<string> {
  const executed = await send(gatewayUrl, 'POST', `/external/function/${functionId}/execute`, userId, { ...HR, inputParams: {} })
  return executed.status === 200 ? 'ran' : `${executed.status} ${executed.body.error?.code ?? ''}`
}

/** What one gateway answered, compared with what the round deployed: a miss names what it saw. */
async function missesOf(stack: DeployStack, gatewayUrl: string, round: number, what: string): Promise<string[]> {
  const misses: string[] = []
  const expect = (name: string, seen: unknown, wanted: unknown): void => {
    if (seen !== wanted)
      misses.push(`round ${round}, ${what} via ${gatewayUrl}: ${name} was ${JSON.stringify(seen)}, not ${JSON.stringify(wanted)}`)
  }
  if (what === 'functions') {
    const executed = await send(gatewayUrl, 'POST', '/external/function/deployProbe/execute', stack.userId, { ...HR, inputParams: {} })
    expect(
      'the function output',
      (executed.body.data as { output?: { round?: unknown } } | undefined)?.output?.round ?? executed.body.error,
      round,
    )
    const model = await send(gatewayUrl, 'GET', '/model/getModel/hr-lib?appId=hr', stack.userId)
    const served = (model.body as { functions?: { deployProbe?: unknown } }).functions?.deployProbe
    expect('the served model', JSON.stringify(served), JSON.stringify({ steps: [{ set: { 'output.round': String(round) } }] }))
  } else if (what === 'process') {
    const started = await send(gatewayUrl, 'POST', '/action/start', stack.userId, { ...HR, processId: 'leave-request', input: { days: 2 } })
    const businessKey = (started.body.data as { context?: { processInstance?: { businessKey?: string } } } | undefined)?.context
      ?.processInstance?.businessKey
    expect('the business key prefix', businessKey?.split('-')[0] ?? started.body.error, `LR${round}`)
  } else if (what === 'data') {
    // The bookings collection was renamed: the engine finds it under its new name only (a find in a
    // collection the app does not have fails the function, docs/reference/errors.md#wm3055).
    expect('a find under the new name', await runs(gatewayUrl, stack.userId, 'bookingsProbe'), 'ran')
    expect('a find under the name before', await runs(gatewayUrl, stack.userId, 'previousBookingsProbe'), '500 wm3055')
  } else {
    const constant = await send(gatewayUrl, 'POST', '/getConstantValue', stack.userId, {
      ...HR,
      processInstanceId: 'none',
      constantId: 'hr:round',
    })
    expect('the constant', (constant.body.data as { result?: unknown } | undefined)?.result, String(round))
  }
  return misses
}

/**
 * One round: a new function library, a new process version, new constants and the bookings
 * collection renamed, each deployed and used at once through every gateway. Answers the misses.
 */
export async function deployAndUseAtOnce(stack: DeployStack, round: number): Promise<string[]> {
  const misses: string[] = []
  const useEverywhere = async (what: string): Promise<void> => {
    for (const gatewayUrl of stack.gatewayUrls) misses.push(...(await missesOf(stack, gatewayUrl, round, what)))
  }
  await deploy(stack, 'hr-lib', probeLibrary(round))
  await useEverywhere('functions')
  await deploy(stack, 'leave-request', (body) => {
    body.businessKey = `'LR${round}-' & $substring($uuid(), 0, 8)`
  })
  await useEverywhere('process')
  await deploy(stack, 'hr-constants', (body) => {
    body.round = String(round)
  })
  await useEverywhere('constants')
  // Each engine keeps the collection under the name it has until now, then the deploy renames it.
  for (const gatewayUrl of stack.gatewayUrls) {
    const previous = await runs(gatewayUrl, stack.userId, 'previousBookingsProbe')
    if (previous !== 'ran') misses.push(`round ${round}, data via ${gatewayUrl}: a find under the current name was ${previous}`)
  }
  await deploy(stack, 'leave-bookings', (body) => {
    body.name = bookingsName(round)
  })
  await useEverywhere('data')
  return misses
}

/** The models the leave request needs, deployed through the gateway as the quick start does. */
export const QUICK_START_MODELS = ['hr-constants', 'hr-lib', 'leave-bookings', 'leave-form', 'leave-request'] as const

export async function deployQuickStart(stack: DeployStack): Promise<void> {
  for (const example of QUICK_START_MODELS) await deploy(stack, example, () => undefined)
}
