/**
 * A run that starts on the engine's thread and moves to the worker pool part-way runs again from
 * its first step there. Its data writes are discarded (savepoints), but the outbound calls it made
 * already reached their targets: the second attempt is given their answers instead of calling
 * again. A run is deterministic up to its host calls, so it asks for the same requests in the same
 * order (same idempotency keys too); a request that differs goes out as usual.
 */
import type { FlowHost, HttpRequest, HttpResponse } from '../../../../runtime/types.js'

/** What identifies a request across the two attempts: everything but the time left for it. */
function requestKey({ timeoutMs: _timeLeft, ...request }: HttpRequest): string {
  return JSON.stringify(request)
}

export class HttpReplay {
  private readonly answered: Array<{ key: string; response: HttpResponse }> = []

  constructor(private readonly host: FlowHost) {}

  /** The host of the first attempt: calls go out and their answers are kept. */
  recording(): FlowHost {
    return this.withHttp(async (request) => {
      const response = await this.host.http(request)
      this.answered.push({ key: requestKey(request), response })
      return response
    })
  }

  /** The host of the second attempt: the first attempt's answers, in order, then real calls. */
  replaying(): FlowHost {
    let next = 0
    return this.withHttp((request) => {
      const kept = this.answered[next]
      if (kept && kept.key === requestKey(request)) {
        next++
        return Promise.resolve(kept.response)
      }
      next = this.answered.length
      return this.host.http(request)
    })
  }

  private withHttp(http: FlowHost['http']): FlowHost {
    const host = this.host
    return {
      constant: (name) => host.constant(name),
      http,
      data: (operation) => host.data(operation),
      appFunction: (functionId) => host.appFunction(functionId),
      findUser: (userId) => host.findUser(userId),
    }
  }
}
