/**
 * Where flow functions' `http` nodes may connect, and which of the request's context headers go
 * along (DESIGN.md §5, no SSRF). A tenant's model names the URL, so the engine must never become its
 * way into the private network: only public addresses are reached, unless FLOW_HTTP_ALLOWED_HOSTS
 * lists the host. The check is on the address actually connected to, resolved at connect time
 * (undici's connector: literal IPs before connecting, names in the DNS lookup it connects with),
 * so neither DNS rebinding nor another spelling of loopback (`2130706433`, `0x7f.1`,
 * `[::ffff:127.0.0.1]`, `0.0.0.0`) gets through. The service's own ports are never reached.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { isIP, type LookupFunction } from 'node:net'
import { networkInterfaces } from 'node:os'
import ipaddr from 'ipaddr.js'
import { Agent, buildConnector } from 'undici'

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

const MAX_CONNECTORS = 1000

export class OutboundRefused extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'OutboundRefused'
  }
}

interface HostRule {
  host: string
  wildcard: boolean
  port: number | undefined
}

function parseRule(entry: string): HostRule {
  const wildcard = entry.startsWith('*.')
  const rest = wildcard ? entry.slice(1) : entry
  const match = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(rest)
  const host = (match?.[1] ?? rest).replace(/^\[|\]$/g, '')
  return { host: isIP(host) ? ipaddr.process(host).toString() : host, wildcard, port: match?.[2] === undefined ? undefined : Number(match[2]) }
}

function defaultPort(protocol: string): number {
  return protocol === 'https:' ? 443 : 80
}

/** The address in its canonical form (an IPv4-mapped IPv6 address as the IPv4 it maps). */
function canonical(address: string): ipaddr.IPv4 | ipaddr.IPv6 {
  return ipaddr.process(address)
}

/** Addresses of this machine, where the service's own ports would be reached. */
function isOwnMachine(address: ipaddr.IPv4 | ipaddr.IPv6): boolean {
  const range = address.range()
  if (range === 'loopback' || range === 'unspecified') return true
  const text = address.toString()
  return Object.values(networkInterfaces()).some((entries) => (entries ?? []).some((entry) => canonical(entry.address).toString() === text))
}

export class OutboundPolicy {
  private readonly rules: HostRule[]
  private readonly forward: ReadonlySet<string>

  constructor(private readonly options: OutboundPolicyOptions) {
    this.rules = options.allowedHosts.map(parseRule)
    this.forward = new Set(options.forwardHeaders.map((name) => name.toLowerCase()))
  }

  /** Is the host (a URL's hostname, IPv6 without brackets) on port listed in FLOW_HTTP_ALLOWED_HOSTS? */
  isAllowedHost(hostname: string, port: number): boolean {
    const host = isIP(hostname) ? canonical(hostname).toString() : hostname.toLowerCase().replace(/\.$/, '')
    return this.rules.some((rule) => (rule.port === undefined || rule.port === port) && (rule.wildcard ? host.endsWith(rule.host) : host === rule.host))
  }

  /** Why connecting to `address`:`port` for `hostname` is refused, or undefined when it may go ahead. */
  refusal(hostname: string, address: string, port: number): string | undefined {
    if (!ipaddr.isValid(address)) return `${address} is not an IP address`
    const ip = canonical(address)
    if (this.options.ownPorts().includes(port) && isOwnMachine(ip)) return `${hostname}:${port} is this service itself`
    if (ip.range() === 'unicast' || this.isAllowedHost(hostname, port)) return undefined
    return `${hostname} resolves to ${ip.toString()}, a ${ip.range()} address, and is not listed in FLOW_HTTP_ALLOWED_HOSTS`
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

  /** A DNS lookup that fails unless every address the name resolves to may be connected to. */
  private lookupFor(hostname: string, port: number): LookupFunction {
    return (name, options, callback) => {
      dnsLookup(name, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
        if (error) return callback(error, '', 0)
        const refused = addresses.map((entry) => this.refusal(hostname, entry.address, port)).find((reason) => reason !== undefined)
        if (refused !== undefined) return callback(new OutboundRefused(refused), '', 0)
        if (options.all) return (callback as unknown as (error: null, addresses: LookupAddress[]) => void)(null, addresses)
        const first = addresses[0] as LookupAddress
        callback(null, first.address, first.family)
      })
    }
  }

  /** An undici dispatcher whose every connection passes this policy first. */
  dispatcher(agentOptions: Omit<Agent.Options, 'connect'> = {}): Agent {
    const connectors = new Map<string, buildConnector.connector>()
    const connect: buildConnector.connector = (options, callback) => {
      const hostname = options.hostname.replace(/^\[|\]$/g, '')
      const port = Number(options.port) || defaultPort(options.protocol)
      if (isIP(hostname)) {
        const refused = this.refusal(hostname, hostname, port)
        if (refused !== undefined) return callback(new OutboundRefused(refused), null)
      }
      const key = `${hostname}:${port}`
      let connector = connectors.get(key)
      if (!connector) {
        // One connector per destination (its lookup knows the host and port); bounded like a cache.
        if (connectors.size >= MAX_CONNECTORS) connectors.clear()
        connector = buildConnector({ lookup: this.lookupFor(hostname, port) })
        connectors.set(key, connector)
      }
      connector(options, callback)
    }
    return new Agent({ ...agentOptions, connect })
  }
}
