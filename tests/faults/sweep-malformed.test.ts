/**
 * The malformed-input sweep: every route of both OpenAPI documents,
 * sent a request generated from its schemas and then that request broken in every way
 * support/malformed.ts knows, through a real gateway and engine. Bad input must be a clean 4xx in
 * the envelope: the only 5xx allowed are the documented ones
 * (docs/reference/http.md#unusual-statuses), and both services stay healthy.
 */
import t from 'tap'
import { loadOpenApiDocument, type OpenApiDocument } from '../../plugins/docs/plugin.js'
import { type GeneratedRequest, RequestGenerator } from '../../services/testing/openapi-requests.js'
import { type Variant, variantsOf, type WireRequest } from './support/malformed.js'
import { bind, bindingsFor, freshInstance, startSweepServices, type SweepServices, sweepIdentity } from './support/sweep-services.js'

/** The same seed sends the same requests; SWEEP_SEED=<n> explores another set (the figures line names the seed). */
const SEED = Number(process.env.SWEEP_SEED ?? 20_261_124)

/**
 * The documented 5xx answers to bad input, by operation (the catalogue codes of
 * openapi/engine.yaml that carry them). Any other 5xx is a bug.
 * - wm3060: `/action/function` missing `processInstanceId` or `taskId`; `/process/start` (and
 *   `/action/start`, `/external/process/start`) missing `processId`.
 * - wm3071: file operations missing `processInstanceId` or `processId`.
 */
const DOCUMENTED_500S: Record<string, readonly string[]> = {
  runActionFunction: ['wm3060'],
  startProcess: ['wm3060'],
  startActionProcess: ['wm3060'],
  startExternalProcess: ['wm3060'],
  uploadFile: ['wm3071'],
  downloadFile: ['wm3071'],
  deleteFile: ['wm3071'],
}

/**
 * Cases another branch fixes; the sweep does not send them until that branch is merged (the
 * integrator removes the entry then). Each names its owner.
 */
const OWNED_ELSEWHERE: ReadonlyArray<{ operationId: string; label: RegExp; owner: string }> = []

/**
 * JSON deeper than MAX_JSON_DEPTH (64) → 400 comes with the authz branch. Until then a 100-level
 * body is only held to the general rule (no 5xx); the integrator sets this to true after merging.
 */
const DEPTH_LIMIT_MERGED = true

/** Requests sent at once: enough to keep both services busy, few enough for a shared machine. */
const CONCURRENCY = 8
const ANSWER_TIMEOUT_MS = 15_000

interface Target {
  service: 'gateway' | 'engine'
  url: string
  document: OpenApiDocument
}

interface Outcome {
  status: number
  /** The error code of the answer (the envelope's `error.code` at the gateway, the record's `code` at the engine). */
  code: string | undefined
  /** What is wrong with the answer's shape, if anything. */
  shapeProblem: string | undefined
}

/** Every error code either service may answer (the gateway passes the engine's on). */
const KNOWN_CODES = new Set(
  (['gateway', 'engine'] as const).flatMap((service) =>
    Object.keys((loadOpenApiDocument(service) as Record<string, unknown>)['x-error-catalogue'] as object),
  ),
)

/** Operations whose 2xx answer is not enveloped, as their documents say (`x-raw`: a model body, a file, a script). */
function rawOperations(document: OpenApiDocument): Set<string> {
  return new Set(
    Object.values(document.paths ?? {})
      .flatMap((item) => Object.values(item) as Array<{ operationId?: string; 'x-raw'?: boolean }>)
      .filter((operation) => operation['x-raw'])
      .map((operation) => operation.operationId!),
  )
}

async function send(url: string, service: Target['service'], wire: WireRequest, raw: boolean): Promise<Outcome> {
  const response = await fetch(`${url}${wire.path}`, {
    method: wire.method,
    headers: wire.headers,
    body: wire.body ?? null,
    signal: AbortSignal.timeout(ANSWER_TIMEOUT_MS),
  })
  const type = response.headers.get('content-type') ?? ''
  // A log stream that opened never ends: its status is the answer.
  if (type.startsWith('text/event-stream')) {
    await response.body?.cancel()
    return { status: response.status, code: undefined, shapeProblem: undefined }
  }
  const text = await response.text()
  if (response.status < 400 && (raw || !type.includes('json'))) return { status: response.status, code: undefined, shapeProblem: undefined }
  let body: Record<string, unknown>
  try {
    body = JSON.parse(text) as Record<string, unknown>
  } catch {
    return { status: response.status, code: undefined, shapeProblem: `not JSON: ${text.slice(0, 80)}` }
  }
  if (service === 'gateway') {
    const error = body.error as { code?: unknown } | undefined
    if (typeof body.status !== 'string' || !('data' in body))
      return { status: response.status, code: undefined, shapeProblem: `${response.status} not the envelope: ${text.slice(0, 120)}` }
    if (response.status >= 400 && !KNOWN_CODES.has(error?.code as string))
      return { status: response.status, code: undefined, shapeProblem: `envelope without a catalogue code: ${text.slice(0, 120)}` }
    return { status: response.status, code: error?.code as string | undefined, shapeProblem: undefined }
  }
  if (response.status >= 400 && (!KNOWN_CODES.has(body.code as string) || body.statusCode !== response.status)) {
    return {
      status: response.status,
      code: undefined,
      shapeProblem: `${response.status} not an error record with a catalogue code: ${text.slice(0, 120)}`,
    }
  }
  return { status: response.status, code: body.code as string | undefined, shapeProblem: undefined }
}

/** What is wrong with an outcome, or undefined when it is acceptable. */
function judge(operationId: string, variant: Variant, outcome: Outcome): string | undefined {
  if (outcome.shapeProblem) return outcome.shapeProblem
  if (outcome.status >= 500 && !(outcome.code && DOCUMENTED_500S[operationId]?.includes(outcome.code)))
    return `${outcome.status} ${outcome.code ?? ''} is not a documented 5xx`
  if (variant.expectation === 'depth-limit' && DEPTH_LIMIT_MERGED && outcome.status !== 400 && outcome.status !== 413)
    return `${outcome.status} for JSON deeper than the limit (400 or 413 expected)`
  return undefined
}

/** Runs `work` over `items`, `limit` at a time. */
async function pooled<T>(items: T[], limit: number, work: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const index = next++
      await work(items[index]!, index)
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
}

interface SweepFigures {
  sent: number
  successes: number
  refusals: number
  fiveHundreds: number
  documentedFiveHundreds: number
  skipped: number
  problems: string[]
}

async function sweep(services: SweepServices, target: Target, seed: number, figures: SweepFigures): Promise<void> {
  const requests: GeneratedRequest[] = new RequestGenerator(target.document, seed).all()
  const fileBody = new Blob(['malformed sweep file'])
  const raw = rawOperations(target.document)
  await pooled(requests, CONCURRENCY, async (generated, index) => {
    const ids = await freshInstance(services)
    const request = bind(target.document, generated, bindingsFor(services, generated.operationId, ids))
    for (const variant of variantsOf(target.document, request, {
      identity: sweepIdentity(services, request),
      seed: seed * 1000 + index,
      fileBody,
    })) {
      if (OWNED_ELSEWHERE.some((owned) => owned.operationId === request.operationId && owned.label.test(variant.label))) {
        figures.skipped++
        continue
      }
      const name = `${target.service} ${request.operationId} ${request.method} ${request.pathTemplate} [${variant.label}]`
      let outcome: Outcome
      try {
        outcome = await send(target.url, target.service, variant.wire, raw.has(request.operationId))
      } catch (error) {
        figures.sent++
        figures.problems.push(`${name}: no answer (${(error as Error).message})`)
        continue
      }
      figures.sent++
      if (outcome.status < 300) figures.successes++
      else if (outcome.status < 500) figures.refusals++
      else figures.fiveHundreds++
      if (outcome.status >= 500 && outcome.code && DOCUMENTED_500S[request.operationId]?.includes(outcome.code))
        figures.documentedFiveHundreds++
      const problem = judge(request.operationId, variant, outcome)
      if (problem) figures.problems.push(`${name}: ${problem}`)
    }
  })
}

t.test('the same seed generates the same requests, another seed others', async (t) => {
  const document = loadOpenApiDocument('gateway')
  const generate = (seed: number) =>
    new RequestGenerator(document, seed).all().map((request) => ({ values: request.values, body: request.body }))
  t.same(generate(SEED), generate(SEED))
  t.notSame(generate(SEED), generate(SEED + 1))
})

t.test('every allowed 5xx is one the operation documents in its x-error-codes', async (t) => {
  for (const service of ['gateway', 'engine'] as const) {
    const document = loadOpenApiDocument(service)
    for (const item of Object.values(document.paths ?? {})) {
      for (const operation of Object.values(item) as Array<{ operationId?: string; 'x-error-codes'?: string[] }>) {
        const allowed = operation.operationId ? DOCUMENTED_500S[operation.operationId] : undefined
        for (const code of allowed ?? [])
          t.ok(operation['x-error-codes']?.includes(code), `${service} ${operation.operationId} documents ${code}`)
      }
    }
  }
})

t.test(
  'malformed requests generated from both OpenAPI documents get a clean 4xx in the ' +
    'envelope, never an unnamed 5xx, and the services stay healthy',
  async (t) => {
    const services = await startSweepServices(t)
    const targets: Target[] = [
      { service: 'gateway', url: services.gatewayUrl, document: loadOpenApiDocument('gateway') },
      { service: 'engine', url: services.engineUrl, document: loadOpenApiDocument('engine') },
    ]
    const figures: SweepFigures = {
      sent: 0,
      successes: 0,
      refusals: 0,
      fiveHundreds: 0,
      documentedFiveHundreds: 0,
      skipped: 0,
      problems: [],
    }
    const started = Date.now()
    for (const [index, target] of targets.entries()) await sweep(services, target, SEED + index, figures)

    t.comment(
      `malformed sweep (seed ${SEED}): ${figures.sent} requests sent: ${figures.successes} 2xx/3xx, ${figures.refusals} 4xx, ` +
        `${figures.fiveHundreds} 5xx (${figures.documentedFiveHundreds} of them documented 500s), ${figures.skipped} skipped (owned by ` +
        `another branch), ${Date.now() - started} ms`,
    )
    if (figures.problems.length > 0)
      t.comment(
        `error lines logged by the services:\n${services.errorLines
          .slice(0, 20)
          .map((line) => JSON.stringify(line).slice(0, 600))
          .join('\n')}`,
      )
    t.same(figures.problems.slice(0, 40), [], `no unnamed 5xx, no answer outside the envelope (${figures.problems.length} problems)`)
    t.ok(figures.sent > 1000, `a real sweep was sent (${figures.sent} requests)`)

    for (const target of targets)
      t.equal((await fetch(`${target.url}/liveness`)).status, 200, `the ${target.service} is alive after the sweep`)
    const ids = await freshInstance(services)
    t.ok(ids.processInstanceId, 'a leave request starts, takes a file and a note through the gateway after the sweep')
    const status = await fetch(`${services.gatewayUrl}/process/${ids.processInstanceId}`, {
      headers: sweepIdentity(services, { adminToken: false }),
    })
    t.equal(status.status, 200, 'its status reads back')
  },
)
