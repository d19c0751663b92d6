#!/usr/bin/env node
// @ts-check
/**
 * The proxy bench's baseline: what Fastify and @fastify/http-proxy cost on their own. A bare Fastify
 * with the library's defaults forwards `GET /process/:processInstanceId` to the engine untouched — no
 * envelope, no correlation headers, no header filtering, no request loggers — so the gateway's cost
 * can be held against the floor the library chain sets.
 *
 * Environment: ENGINE_URL, ENGINE_SOCKET (the engine's Unix socket, used instead of ENGINE_URL when
 * set, as the gateway does), GATEWAY_PORT, HOST (as the gateway reads them).
 */
import httpProxy from '@fastify/http-proxy'
import Fastify from 'fastify'

const socket = process.env.ENGINE_SOCKET
const upstream = socket ? `unix+http://${encodeURIComponent(socket)}` : (process.env.ENGINE_URL ?? '')
const app = Fastify({ logger: false })
app.get('/liveness', async () => ({ status: 'UP' }))
await app.register(httpProxy, { upstream, routes: ['/process/:processInstanceId'], httpMethods: ['GET'], disableRequestLogging: true })
await app.listen({ port: Number(process.env.GATEWAY_PORT), host: process.env.HOST ?? '127.0.0.1' })
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)))
