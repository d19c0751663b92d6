/**
 * Where the service may connect on behalf of a tenant (no SSRF, docs/reference/flow-functions.md#outbound-http): flow functions'
 * `http` nodes (FLOW_HTTP_ALLOWED_HOSTS) and webhook deliveries (WEBHOOK_ALLOWED_HOSTS) pass the
 * same rules. Only public addresses are reached, unless the allow-list names the host. The check is
 * on the address actually connected to, resolved at connect time (undici's connector: literal IPs
 * before connecting, names in the DNS lookup it connects with), so neither DNS rebinding nor another
 * spelling of loopback (`2130706433`, `0x7f.1`, `[::ffff:127.0.0.1]`, `0.0.0.0`) gets through. The
 * service's own ports are never reached.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { lookup as dnsLookupAll } from 'node:dns/promises'
import type { Server } from 'node:http'
import { isIP, type AddressInfo, type LookupFunction } from 'node:net'
import { networkInterfaces } from 'node:os'
import ipaddr from 'ipaddr.js'
import { Agent, buildConnector } from 'undici'

export interface DestinationGuardOptions {
  /** The allow-list: `name`, `*.suffix`, an IP or `[v6]`, each with an optional `:port`. */
  allowedHosts: readonly string[]
  /** The ports this service listens on, read when a connection is made (ephemeral in tests). */
  ownPorts: () => readonly number[]
  /** The variable the allow-list comes from, named in refusals (FLOW_HTTP_ALLOWED_HOSTS when not given). */
  allowListName?: string
}

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
  return {
    host: isIP(host) ? ipaddr.process(host).toString() : host,
    wildcard,
    port: match?.[2] === undefined ? undefined : Number(match[2]),
  }
}

export function defaultPort(protocol: string): number {
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

/** The port `server` listens on (none before it listens) and the `others` known from the configuration (0: unknown). */
export function listeningPorts(server: Server, ...others: readonly number[]): number[] {
  const address = server.address() as AddressInfo | string | null
  const ports = typeof address === 'object' && address !== null ? [address.port] : []
  return [...ports, ...others.filter((port) => port > 0)]
}

export class DestinationGuard {
  private readonly rules: HostRule[]
  private readonly allowListName: string

  constructor(private readonly guardOptions: DestinationGuardOptions) {
    this.rules = guardOptions.allowedHosts.map(parseRule)
    this.allowListName = guardOptions.allowListName ?? 'FLOW_HTTP_ALLOWED_HOSTS'
  }

  /** Is the host (a URL's hostname, IPv6 without brackets) on port listed in the allow-list? */
  isAllowedHost(hostname: string, port: number): boolean {
    const host = isIP(hostname) ? canonical(hostname).toString() : hostname.toLowerCase().replace(/\.$/, '')
    return this.rules.some(
      (rule) => (rule.port === undefined || rule.port === port) && (rule.wildcard ? host.endsWith(rule.host) : host === rule.host),
    )
  }

  /** Why connecting to `address`:`port` for `hostname` is refused, or undefined when it may go ahead. */
  refusal(hostname: string, address: string, port: number): string | undefined {
    if (!ipaddr.isValid(address)) return `${address} is not an IP address`
    const ip = canonical(address)
    if (this.guardOptions.ownPorts().includes(port) && isOwnMachine(ip)) return `${hostname}:${port} is this service itself`
    if (ip.range() === 'unicast' || this.isAllowedHost(hostname, port)) return undefined
    return `${hostname} resolves to ${ip.toString()}, a ${ip.range()} address, and is not listed in ${this.allowListName}`
  }

  /**
   * Why a URL is refused as a destination now (not http(s), a name that does not resolve, or an
   * address the rules refuse), or undefined. Checked before a URL is stored; the connection made
   * later is checked again on the address it resolves to then.
   */
  async urlRefusal(raw: string): Promise<string | undefined> {
    let url: URL
    try {
      url = new URL(raw)
    } catch {
      return `${raw} is not a URL`
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return `${raw} is not an http or https URL`
    const hostname = url.hostname.replace(/^\[|\]$/g, '')
    const port = Number(url.port) || defaultPort(url.protocol)
    let addresses: LookupAddress[]
    try {
      addresses = isIP(hostname) ? [{ address: hostname, family: isIP(hostname) }] : await dnsLookupAll(hostname, { all: true })
    } catch (error) {
      return `${hostname} does not resolve (${(error as { code?: string }).code ?? 'lookup failed'})`
    }
    return addresses.map((entry) => this.refusal(hostname, entry.address, port)).find((reason) => reason !== undefined)
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

  /** An undici dispatcher whose every connection passes these rules first. */
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

/**
 * The guard of webhook destinations (WEBHOOK_ALLOWED_HOSTS), the same in the gateway that accepts a
 * URL and in the engine that delivers to it: never this server's port, nor the other service's.
 */
export function webhookDestinationGuard(allowedHosts: readonly string[], server: Server, otherServicePort: number): DestinationGuard {
  return new DestinationGuard({
    allowedHosts,
    ownPorts: () => listeningPorts(server, otherServicePort),
    allowListName: 'WEBHOOK_ALLOWED_HOSTS',
  })
}
