/**
 * Where flow functions' `http` nodes may connect, and which of the request's context headers go
 * along (no SSRF, docs/reference/flow-functions.md#outbound-http). A tenant's model names the URL, so the engine must never become its
 * way into the private network: the destination rules (lib/outbound/destination-guard.ts, shared
 * with webhook deliveries) let only public addresses through, unless FLOW_HTTP_ALLOWED_HOSTS lists
 * the host, checked on the address actually connected to; the service's own ports are never reached.
 */
import { DestinationGuard, defaultPort } from '../../../lib/outbound/destination-guard.js'

export { OutboundRefused } from '../../../lib/outbound/destination-guard.js'

export interface OutboundPolicyOptions {
  /** FLOW_HTTP_ALLOWED_HOSTS: `name`, `*.suffix`, an IP or `[v6]`, each with an optional `:port`. */
  allowedHosts: readonly string[]
  /** FLOW_HTTP_FORWARD_HEADERS: sensitive context headers that may go along to allowed hosts. */
  forwardHeaders: readonly string[]
  /** The ports this service listens on, read when a connection is made (ephemeral in tests). */
  ownPorts: () => readonly number[]
}

/** Context headers that carry a caller's identity: never forwarded unless FLOW_HTTP_FORWARD_HEADERS lists them. */
const SENSITIVE_HEADERS: ReadonlySet<string> = new Set(['authorization', 'cookie', 'user'])

export class OutboundPolicy extends DestinationGuard {
  private readonly forward: ReadonlySet<string>

  constructor(options: OutboundPolicyOptions) {
    super({ allowedHosts: options.allowedHosts, ownPorts: options.ownPorts, allowListName: 'FLOW_HTTP_ALLOWED_HOSTS' })
    this.forward = new Set(options.forwardHeaders.map((name) => name.toLowerCase()))
  }

  /**
   * The request's context headers an outbound call to `url` carries: none to a host that is not
   * allowed, and the sensitive ones (authorization, cookie, user) only when FLOW_HTTP_FORWARD_HEADERS
   * lists them.
   */
  contextHeadersFor(url: URL, additionalHeaders: Readonly<Record<string, string>>): Record<string, string> {
    if (!this.isAllowedHost(url.hostname.replace(/^\[|\]$/g, ''), Number(url.port) || defaultPort(url.protocol))) return {}
    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries(additionalHeaders)) {
      if (!SENSITIVE_HEADERS.has(name) || this.forward.has(name)) headers[name] = value
    }
    return headers
  }
}
