/** The gateway's own metrics: how long the engine takes to answer a proxied request, and how it fails. */
import { DURATION_BUCKETS, ServiceMetrics } from './service-metrics.js'

export class GatewayMetrics extends ServiceMetrics {
  private readonly upstreamDuration = this.preparedHistogram(
    'workflow_proxy_upstream_duration_seconds',
    'Time from forwarding a request to the engine until its answer began, by route template.',
    DURATION_BUCKETS,
    ['http_route'],
  )
  private readonly upstreamErrors = this.counter(
    'workflow_proxy_upstream_errors_total',
    'Proxied requests the engine did not answer usefully, by the gateway error code answered (fm5020, fm5021, fm5040).',
    ['code'],
  )

  upstreamAnswered(route: string, seconds: number): void {
    this.upstreamDuration.cellOf(route).observe(seconds)
  }

  upstreamFailed(code: string): void {
    this.upstreamErrors.inc({ code })
  }
}
