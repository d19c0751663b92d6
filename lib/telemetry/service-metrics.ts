/**
 * The Prometheus registry of one service (gateway or engine): the default process metrics and
 * `http_server_request_duration_seconds`. Each app has a registry of its own, so two services in one
 * process (the all-in-one, tests) expose what is theirs on their own port.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import { PreparedHistogram } from './prepared-histogram.js'

/** Request and call durations: a fast service answers in milliseconds, a slow route in seconds. */
export const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

/** Store operations and journal commits: mostly well under a millisecond. */
export const STORE_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1]

/**
 * prom-client's default metrics include these gauges with a `_total` suffix, which Prometheus
 * reserves for counters (`promtool check metrics` refuses them); their per-type twins
 * (`nodejs_active_handles{type=…}`, …) stay.
 */
const MISNAMED_DEFAULT_GAUGES = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']

/** Where a request that matched no route is counted: its URL would make labels unbounded. */
export const UNMATCHED_ROUTE = 'unmatched'

export class ServiceMetrics {
  readonly registry = new Registry()
  private readonly httpDuration: PreparedHistogram<'http_route' | 'http_request_method' | 'http_response_status_code'>

  constructor() {
    collectDefaultMetrics({ register: this.registry })
    for (const name of MISNAMED_DEFAULT_GAUGES) this.registry.removeSingleMetric(name)
    this.httpDuration = this.preparedHistogram(
      'http_server_request_duration_seconds',
      'Duration of HTTP requests served, by route template, method and status code.',
      DURATION_BUCKETS,
      ['http_route', 'http_request_method', 'http_response_status_code'],
    )
  }

  /** A counter in this service's registry (the helpers below keep each metric's declaration to its name, help and labels). */
  protected counter<Label extends string = never>(name: string, help: string, labelNames: readonly Label[] = []): Counter<Label> {
    return new Counter({ name, help, labelNames, registers: [this.registry] })
  }

  protected histogram<Label extends string = never>(
    name: string,
    help: string,
    buckets: number[],
    labelNames: readonly Label[] = [],
  ): Histogram<Label> {
    return new Histogram({ name, help, buckets, labelNames, registers: [this.registry] })
  }

  /** A histogram observed on a hot path, through cells (prepared-histogram.ts). */
  protected preparedHistogram<Label extends string>(
    name: string,
    help: string,
    buckets: number[],
    labelNames: readonly Label[],
  ): PreparedHistogram<Label> {
    return new PreparedHistogram({ name, help, buckets, labelNames, registers: [this.registry] })
  }

  protected gauge<Label extends string = never>(
    name: string,
    help: string,
    labelNames: readonly Label[] = [],
    collect?: (this: Gauge<Label>) => Promise<void>,
  ): Gauge<Label> {
    return new Gauge({ name, help, labelNames, registers: [this.registry], ...(collect ? { collect } : {}) })
  }

  /** `route` is the route template (`/process/:processInstanceId`), never the URL. */
  httpRequest(route: string | undefined, method: string, statusCode: number, seconds: number): void {
    this.httpDuration.cellOf(route ?? UNMATCHED_ROUTE, method, statusCode).observe(seconds)
  }

  get contentType(): string {
    return this.registry.contentType
  }

  exposition(): Promise<string> {
    return this.registry.metrics()
  }
}
