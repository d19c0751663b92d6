/**
 * `GET /cloud/serviceLog/:service` (docs/reference/gateway.md#log-stream): checks the
 * request in the documented order (client id and service → 400, deployment configuration → 500,
 * studio token → 401) and finds the feed of the service's lines: its ring when the service runs in
 * this process, else the other process's feed at LOG_SOURCE_<FM|WFM>_URL.
 */
import type { Config } from '../../../lib/config/config.js'
import type { GatewayErrorCode } from '../../../openapi/generated/errors.js'
import type { ErrorFactory } from '../../../plugins/errors/service-error.js'
import { verifyStudioToken } from '../../../plugins/identity/studio-token.js'
import { type LogFeed, LogSourceError, remoteFeed, ringFeed } from '../../../plugins/logging/event-stream.js'
import { logClientId } from '../../../plugins/logging/logger.js'
import type { LogRings } from '../../../plugins/logging/ring.js'

export type LogService = keyof LogRings

const LOG_SERVICES: readonly LogService[] = ['fm', 'wfm']

export interface LogStreamRequest {
  service: string
  headers: Record<string, string | string[] | undefined>
}

function headerValue(headers: LogStreamRequest['headers'], name: string): string | undefined {
  const value = headers[name]
  return Array.isArray(value) ? value[0] : value
}

export class LogStreamService {
  constructor(
    private readonly config: Pick<Config, 'deploymentEnv' | 'studioTokenSecret' | 'logSourceUrls'>,
    private readonly rings: LogRings,
    private readonly fail: ErrorFactory<GatewayErrorCode>,
  ) {}

  /** The checked request's feed; throws the documented error otherwise, before anything is streamed. */
  async open(request: LogStreamRequest): Promise<LogFeed> {
    const clientId = logClientId({ headers: request.headers })
    if (clientId === undefined)
      throw this.fail('fm3040', {
        args: ['the lplogclientid header is missing or unusable'],
        parameters: { field: 'headers.lplogclientid' },
      })
    if (!(LOG_SERVICES as readonly string[]).includes(request.service)) {
      throw this.fail('fm3040', {
        args: [`unknown service ${JSON.stringify(request.service)} (fm or wfm)`],
        parameters: { field: 'params.service' },
      })
    }
    const service = request.service as LogService
    if (this.config.deploymentEnv === undefined) throw this.fail('fm3041', { args: ['DEPLOYMENT_ENV is not set'] })
    if (this.config.studioTokenSecret === undefined) throw this.fail('fm3041', { args: ['STUDIO_TOKEN_SECRET is not set'] })

    const token = headerValue(request.headers, 'studiotoken')
    if (!token) throw this.fail('fm4011', { args: ['the studiotoken header is missing'], parameters: { field: 'headers.studiotoken' } })
    const verdict = verifyStudioToken(token, this.config.studioTokenSecret)
    if (!verdict.valid) throw this.fail('fm4011', { args: [verdict.problem], parameters: { field: 'headers.studiotoken' } })
    if (verdict.claims.sub !== clientId)
      throw this.fail('fm4011', { args: ['its sub is not the lplogclientid'], parameters: { field: 'headers.studiotoken' } })

    const ring = this.rings[service]
    if (ring) return ringFeed(ring, clientId)
    const url = this.config.logSourceUrls[service]
    if (url === undefined)
      throw this.fail('fm3041', {
        args: [`LOG_SOURCE_${service.toUpperCase()}_URL is not set and the service does not run in this process`],
      })
    try {
      // A gateway source checks the studio token again; the engine's internal feed, in jwt mode, the
      // caller's bearer token (the gateway has none of its own).
      const authorization = headerValue(request.headers, 'authorization')
      return await remoteFeed(url, clientId, { studiotoken: token, ...(authorization === undefined ? {} : { authorization }) })
    } catch (error) {
      if (error instanceof LogSourceError) throw this.fail('fm3042', { args: [error.message], cause: error })
      throw error
    }
  }
}
