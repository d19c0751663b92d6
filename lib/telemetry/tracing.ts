/**
 * OpenTelemetry traces of one service, made only when OTEL_EXPORTER_OTLP_ENDPOINT is set: spans go
 * over OTLP (http/protobuf by default, http/json when OTEL_EXPORTER_OTLP_PROTOCOL says so) through the
 * SDK's batch processor. Each service has a tracer provider of its own (its own `service.name`), so
 * two services in one process — the all-in-one's threads, tests — still report as two; the context
 * manager (AsyncLocalStorage) is process-wide and registered once.
 */
import {
  type Attributes,
  type Context,
  context,
  defaultTextMapGetter,
  defaultTextMapSetter,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
  type Tracer,
} from '@opentelemetry/api'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import type { NodeTracerProvider } from '@opentelemetry/sdk-trace-node'
import type { TelemetryConfig } from '../config/config.js'

/** The W3C trace context of a span, as `request.traceContext` holds it. */
export interface SpanIds {
  traceId: string
  spanId: string
  flags: string
}

let contextManagerRegistered = false

/** The traces URL: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given, else the endpoint's `/v1/traces` (the OTLP spec). */
export function tracesUrl(config: Pick<TelemetryConfig, 'otlpEndpoint' | 'otlpTracesEndpoint'>): string | undefined {
  if (config.otlpTracesEndpoint !== undefined) return config.otlpTracesEndpoint
  return config.otlpEndpoint === undefined ? undefined : `${config.otlpEndpoint}/v1/traces`
}

export class Tracing {
  readonly tracer: Tracer
  private readonly propagator = new W3CTraceContextPropagator()

  private constructor(private readonly provider: NodeTracerProvider) {
    this.tracer = provider.getTracer('workflow-service')
  }

  /**
   * The service's tracing, or undefined when no OTLP endpoint is configured (then nothing traces).
   * The SDK and its exporters are loaded only then: about 0.15 s of every service's start otherwise.
   */
  static async create(config: TelemetryConfig, defaultServiceName: string): Promise<Tracing | undefined> {
    const url = tracesUrl(config)
    if (url === undefined) return undefined
    const exporter =
      config.otlpProtocol === 'http/json'
        ? new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter({ url })
        : new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter({ url })
    const { resourceFromAttributes } = await import('@opentelemetry/resources')
    const { BatchSpanProcessor, NodeTracerProvider } = await import('@opentelemetry/sdk-trace-node')
    const provider = new NodeTracerProvider({
      resource: resourceFromAttributes({ 'service.name': config.serviceName ?? defaultServiceName }),
      spanProcessors: [new BatchSpanProcessor(exporter)],
    })
    if (!contextManagerRegistered) {
      // Registers the AsyncLocalStorage context manager; the global propagator is left alone (each
      // service uses its own), and spans are made through each service's own tracer, never the global one.
      provider.register({ propagator: null })
      contextManagerRegistered = true
    }
    return new Tracing(provider)
  }

  /** The caller's context from its `traceparent` (the root context when it sent none or a bad one). */
  extract(headers: Record<string, string | string[] | undefined>): Context {
    return this.propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter)
  }

  /** Adds the `traceparent` of `parent`'s span to outgoing headers. */
  inject(parent: Context, headers: Record<string, string>): void {
    this.propagator.inject(parent, headers, defaultTextMapSetter)
  }

  /** The context code runs in now (the request's server span while serving it). */
  active(): Context {
    return context.active()
  }

  startServerSpan(name: string, parent: Context, attributes: Attributes): Span {
    return this.tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, parent)
  }

  /**
   * Runs an outgoing call in a client span of its own whose `traceparent` goes in `headers`, so the
   * callee continues this trace.
   */
  async clientCall<T>(
    name: string,
    parent: Context,
    attributes: Attributes,
    headers: Record<string, string>,
    call: () => Promise<T>,
  ): Promise<T> {
    const span = this.tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, parent)
    this.inject(trace.setSpan(parent, span), headers)
    try {
      return await call()
    } catch (error) {
      recordFailure(span, error)
      throw error
    } finally {
      span.end()
    }
  }

  /** A span around one store call, child of the active context. */
  startStoreSpan(collection: string, operation: string): Span {
    return this.tracer.startSpan(
      `${operation} ${collection}`,
      {
        kind: SpanKind.CLIENT,
        attributes: { 'db.collection.name': collection, 'db.operation.name': operation },
      },
      context.active(),
    )
  }

  /** Sends the spans still buffered (tests, shutdown). */
  flush(): Promise<void> {
    return this.provider.forceFlush()
  }

  shutdown(): Promise<void> {
    return this.provider.shutdown()
  }
}

export function recordFailure(span: Span, error: unknown): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) })
}

export function spanIds(span: Span): SpanIds {
  const { traceId, spanId, traceFlags } = span.spanContext()
  return { traceId, spanId, flags: traceFlags.toString(16).padStart(2, '0') }
}

/** Runs `done` (the rest of a Fastify hook chain) with `span` active, so what it awaits inherits it. */
export function runWithSpan(span: Span, parent: Context, done: () => void): void {
  context.with(trace.setSpan(parent, span), done)
}
