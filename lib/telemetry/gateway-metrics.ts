/** The gateway's own metrics: how long the engine takes to answer a proxied request, and how it fails. */
import { Counter, Histogram } from 'prom-client'
import { DURATION_BUCKETS, ServiceMetrics } from './service-metrics.js'

export class GatewayMetrics extends ServiceMetrics {
  private readonly upstreamDuration = new Histogram({
    name: 'workflow_proxy_upstream_duration_seconds',
    help: 'Time from forwarding a request to the engine until its answer began, by route template.',
    labelNames: ['http_route'],
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  })
  private readonly upstreamErrors = new Counter({
    name: 'workflow_proxy_upstream_errors_total',
    help: 'Proxied requests the engine did not answer usefully, by the gateway error code answered (fm5020, fm5021, fm5040).',
    labelNames: ['code'],
    registers: [this.registry],
  })

  upstreamAnswered(route: string, seconds: number): void {
    this.upstreamDuration.observe({ http_route: route }, seconds)
  }

  upstreamFailed(code: string): void {
    this.upstreamErrors.inc({ code })
  }
}
