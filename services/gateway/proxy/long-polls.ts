/**
 * Long polls through the proxy (docs/reference/external-tasks.md#long-polling): the engine's answer
 * to `fetchAndLock` waits for a task, and the engine ends that wait when its client goes away. The
 * gateway's client going away must therefore end the gateway's request to the engine, which
 * reply-from does not do: the forwarded request carries a reference in a header, an undici
 * interceptor takes it off and keeps the request's abort under it, and the client's connection
 * closing before its answer calls that abort.
 */
import type { FastifyReply } from 'fastify'
import type { Dispatcher } from 'undici'

/** The proxied routes whose engine answer waits for something to happen. */
const LONG_POLL_ROUTES = new Set(['POST /external/worker/fetchAndLock'])

const REFERENCE_HEADER = 'x-workflow-long-poll'

type Abort = (reason?: Error) => void

/** The parts of a request that say which route it is. */
interface RouteOf {
  id: string
  method: string
  routeOptions: { url?: string | undefined }
}

export class LongPolls {
  /** The abort of each forwarded long poll, or null once its client left before it was connected. */
  private readonly aborts = new Map<string, Abort | null>()

  isLongPoll(request: RouteOf): boolean {
    return LONG_POLL_ROUTES.has(`${request.method} ${request.routeOptions.url ?? ''}`)
  }

  /** Watches the client of a long poll: leaving before its answer ends the engine request. */
  watch(request: RouteOf, reply: FastifyReply): void {
    const reference = String(request.id)
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) {
        const abort = this.aborts.get(reference)
        // Connected: ended now; not yet: ended as it connects. Forgotten when the engine request ends.
        if (abort) abort(new Error('the client went away'))
        else this.aborts.set(reference, null)
      } else this.aborts.delete(reference)
    })
  }

  /** The headers of the forwarded request, with the reference of a long poll. */
  headersOf<Headers extends object>(request: RouteOf, headers: Headers): Headers {
    return this.isLongPoll(request) ? { ...headers, [REFERENCE_HEADER]: String(request.id) } : headers
  }

  /** The interceptor of the pool to the engine: it keeps each long poll's abort under its reference. */
  interceptor(): Dispatcher.DispatcherComposeInterceptor {
    return (dispatch) => (options, handler) => {
      const headers = options.headers as Record<string, string | string[] | undefined> | undefined
      const reference = headers?.[REFERENCE_HEADER]
      if (typeof reference !== 'string') return dispatch(options, handler)
      const { [REFERENCE_HEADER]: _reference, ...forwarded } = headers ?? {}
      const aborts = this.aborts
      const started = (abort: Abort): void => {
        if (aborts.get(reference) === null) abort(new Error('the client went away'))
        else aborts.set(reference, abort)
      }
      // undici's handlers: `onRequestStart(controller)` (its own), or `onConnect(abort)` (the older form).
      const watched = new Proxy(handler, {
        get(target, property, receiver) {
          const value: unknown = Reflect.get(target, property, receiver)
          if (typeof value !== 'function') return value
          const method = value as (...args: unknown[]) => unknown
          switch (property) {
            case 'onRequestStart':
              return (controller: { abort(reason: Error): void }, ...rest: unknown[]) => {
                started((reason) => controller.abort(reason ?? new Error('aborted')))
                return method.call(target, controller, ...rest)
              }
            case 'onConnect':
              return (abort: Abort, ...rest: unknown[]) => {
                started(abort)
                return method.call(target, abort, ...rest)
              }
            case 'onResponseEnd':
            case 'onResponseError':
            case 'onComplete':
            case 'onError':
              return (...args: unknown[]) => {
                aborts.delete(reference)
                return method.apply(target, args)
              }
            default:
              return method.bind(target)
          }
        },
      })
      return dispatch({ ...options, headers: forwarded }, watched)
    }
  }
}
