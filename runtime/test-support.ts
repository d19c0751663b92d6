/**
 * A RunEnvironment made of plain objects for runtime tests: a fixed clock, counting ids, a user
 * table, constants, app functions, and recorders for outbound HTTP and data operations.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { examplesDir } from '../lib/server/paths.js'
import type {
  DataOperation,
  FlowFunctionDefinition,
  FlowHost,
  HttpRequest,
  HttpResponse,
  ProcessModelBody,
  RunEnvironment,
  RunLimits,
  RuntimeUser,
  WorkflowModel,
} from './types.js'
import { RuntimeError } from './types.js'

export const TEST_LIMITS: RunLimits = {
  timeoutMs: 2000,
  inlineBudgetMs: 20,
  expressionNodes: 20_000,
  maxSteps: 1000,
  maxCallDepth: 8,
  maxAutomaticSteps: 200,
}

export function exampleModel<Body = ProcessModelBody>(name: string, version = 1): WorkflowModel<Body> {
  const raw = JSON.parse(readFileSync(join(examplesDir, `${name}.json`), 'utf8')) as Omit<
    WorkflowModel<Body>,
    'appId' | 'version' | 'updateDate'
  >
  return { ...raw, appId: 'hr', organizationId: 'acme', version, updateDate: '2026-01-01T00:00:00.000Z' }
}

export function user(
  userId: string,
  swimlanes: string[] = [],
  fullName = userId.replace(/^./, (first) => first.toUpperCase()),
): RuntimeUser {
  return { userId, fullName, roles: [], swimlanes }
}

export interface FakeHostOptions {
  constants?: Record<string, string>
  appFunctions?: Record<string, FlowFunctionDefinition>
  users?: RuntimeUser[]
  http?: (request: HttpRequest) => Promise<HttpResponse>
  data?: (operation: DataOperation) => Promise<unknown>
}

export interface FakeHost extends FlowHost {
  readonly httpRequests: HttpRequest[]
  readonly dataOperations: DataOperation[]
  readonly constants: Record<string, string>
}

export function fakeHost(options: FakeHostOptions = {}): FakeHost {
  const httpRequests: HttpRequest[] = []
  const dataOperations: DataOperation[] = []
  const constants = { ...options.constants }
  return {
    httpRequests,
    dataOperations,
    constants,
    constant: async (name) => constants[name],
    http: async (request) => {
      httpRequests.push(request)
      return options.http ? options.http(request) : { status: 200, headers: { 'content-type': 'application/json' }, body: { ok: true } }
    },
    data: async (operation) => {
      dataOperations.push(operation)
      return options.data ? options.data(operation) : { acknowledged: true }
    },
    appFunction: (functionId) => options.appFunctions?.[functionId],
    findUser: async (userId) => options.users?.find((candidate) => candidate.userId === userId) ?? null,
  }
}

export interface FakeEnvironment extends RunEnvironment {
  host: FakeHost
  /** Moves the fixed clock on. */
  advance(milliseconds: number): void
}

/** An environment acting as `actor`, with ids `id-1`, `id-2`, … and a clock that stands still. */
export function fakeEnvironment(
  actor: RuntimeUser,
  host: FakeHost = fakeHost(),
  limits: Partial<RunLimits> = {},
  counter = { next: 0 },
): FakeEnvironment {
  let now = Date.parse('2026-03-01T09:00:00.000Z')
  return {
    actor,
    host,
    limits: { ...TEST_LIMITS, ...limits },
    now: () => new Date(now),
    newId: () => `id-${++counter.next}`,
    newInstanceId: () => `id-${++counter.next}`,
    advance: (milliseconds) => {
      now += milliseconds
    },
  }
}

/** The RuntimeError a call is refused with (fails the test when it succeeds, or fails otherwise). */
export async function refusal(call: Promise<unknown>): Promise<RuntimeError> {
  try {
    await call
  } catch (error) {
    if (error instanceof RuntimeError) return error
    throw error
  }
  throw new Error('expected the runtime to refuse the call')
}
