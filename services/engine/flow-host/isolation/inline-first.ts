/**
 * The engine's FunctionRunner (runtime/types.ts): a function that uses none of the costly constructs
 * (model/expression-cost.ts) is first tried here, on the engine's thread, for at most
 * `limits.inlineBudgetMs` of that thread's time: most functions are done in well under a
 * millisecond, far cheaper than handing them to a worker. One that goes past the budget, produces a
 * too large value or calls a costly function (the runtime interrupts it: InlineRunInterrupt) moves
 * to the worker pool: its data writes are discarded, and it runs again from the start there, with
 * the time it has left and the answers of the outbound calls it already made (http-replay.ts).
 */
import { performance } from 'node:perf_hooks'
import type { CompiledFunction } from '../../../../runtime/flow/compile.js'
import { executeInline, type InlineStopReason, InlineRunInterrupt } from '../../../../runtime/flow/execute.js'
import type {
  FlowHost,
  FunctionIsolation,
  FunctionResolver,
  FunctionRunner,
  FunctionRunRequest,
  FunctionRunResult,
  RunEnvironment,
  Savepoints,
} from '../../../../runtime/types.js'
import { HttpReplay } from './http-replay.js'
import { withFields } from '../../../../lib/with-fields.js'

/** Why a run went to the worker pool: it uses a costly construct, inline runs are off, or its inline run stopped. */
export type PoolReason = 'costly' | 'inlineOff' | InlineStopReason

export class InlineFirstRunner implements FunctionRunner {
  /**
   * `pool`: the tenant's share of the worker pool; `savepoints`: the request's data writes, to
   * discard a moved run's; `movedToPool`: told of each run that goes to the pool, and why.
   */
  constructor(
    private readonly pool: FunctionIsolation,
    private readonly savepoints: Savepoints,
    private readonly movedToPool: (reason: PoolReason) => void = () => undefined,
  ) {}

  async run(fn: CompiledFunction, request: FunctionRunRequest, env: RunEnvironment, resolve: FunctionResolver): Promise<FunctionRunResult> {
    const inPool = (poolRequest: FunctionRunRequest, host: FlowHost): Promise<FunctionRunResult> =>
      this.pool.run(
        { functionId: fn.functionId, definition: fn.definition, request: poolRequest },
        { ...env, host },
        async (functionId) => (await resolve(functionId))?.definition,
      )
    if (fn.costly !== undefined || env.limits.inlineBudgetMs <= 0) {
      this.movedToPool(fn.costly !== undefined ? 'costly' : 'inlineOff')
      return inPool(request, env.host)
    }
    // Both attempts send the same idempotency keys, also for a standalone run.
    const scoped: FunctionRunRequest = withFields(request, { idempotencyScope: request.idempotencyScope ?? `run:${env.newId()}` })
    const replay = new HttpReplay(env.host)
    const mark = this.savepoints.mark()
    const startedAt = performance.now()
    try {
      return await executeInline(fn, scoped, { ...env, host: replay.recording() }, resolve, env.limits.inlineBudgetMs)
    } catch (error) {
      if (!(error instanceof InlineRunInterrupt)) throw error
      this.movedToPool(error.reason)
      this.savepoints.discardSince(mark)
      return inPool({ ...scoped, spentMs: (scoped.spentMs ?? 0) + performance.now() - startedAt }, replay.replaying())
    }
  }
}
