import { Writable } from 'node:stream'
import t from 'tap'
import pino from 'pino'
import type { FastifyBaseLogger } from 'fastify'
import { DeferredChildLogger } from './deferred-child.js'

/** A pino root logger at `level` whose lines land in `lines`, and a parent over it that counts the children made. */
function countingRoot(level: pino.Level) {
  const lines: Array<Record<string, unknown>> = []
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>)
      done()
    },
  })
  const root = pino({ level, base: null }, sink)
  let children = 0
  // The root as the request logger's parent, counting the children made of it.
  const parent: FastifyBaseLogger = Object.assign(Object.create(root) as pino.Logger, {
    child: (bindings: pino.Bindings, options?: pino.ChildLoggerOptions) => {
      children++
      return root.child(bindings, options)
    },
  })
  return { root, parent, lines, made: () => children }
}

/** pino writes to its destination synchronously for a Writable, but give the stream a turn. */
const drained = () => new Promise((resolve) => setImmediate(resolve))

t.test('a request logger that logs nothing at the levels written makes no child', async (t) => {
  const { parent, lines, made } = countingRoot('warn')
  const logger = new DeferredChildLogger(parent, { reqId: 'r-1' }, {})
  logger.info('request completed')
  logger.debug({ detail: 1 }, 'detail')
  logger.trace('trace')
  logger.silent()
  await drained()
  t.equal(made(), 0)
  t.same(lines, [])
  t.equal(logger.level, 'warn')
})

t.test('its first line makes the child once, with the bindings and message prefix Fastify asked for', async (t) => {
  const { parent, lines, made } = countingRoot('info')
  const logger = new DeferredChildLogger(parent, { reqId: 'r-2' }, { msgPrefix: '[CI: c1] ' })
  logger.info({ code: 'x' }, 'first')
  logger.error(new Error('broken'), 'second')
  logger.warn('third %s', 'formatted')
  await drained()
  t.equal(made(), 1)
  t.match(lines, [
    { level: 30, reqId: 'r-2', code: 'x', msg: '[CI: c1] first' },
    { level: 50, reqId: 'r-2', err: { message: 'broken' }, msg: '[CI: c1] second' },
    { level: 40, reqId: 'r-2', msg: '[CI: c1] third formatted' },
  ])
})

t.test('a level set on it is its own: the parent keeps its level', async (t) => {
  const { root, parent, lines } = countingRoot('warn')
  const logger = new DeferredChildLogger(parent, { reqId: 'r-3' }, {})
  logger.level = 'debug'
  logger.debug('now written')
  await drained()
  t.equal(logger.level, 'debug')
  t.equal(root.level, 'warn')
  t.match(lines, [{ level: 20, reqId: 'r-3', msg: 'now written' }])
})

t.test('a child of it carries its bindings and the new ones', async (t) => {
  const { parent, lines } = countingRoot('info')
  const logger = new DeferredChildLogger(parent, { reqId: 'r-4' }, {})
  logger.child({ trace_id: 't-1' }).info('traced')
  await drained()
  t.match(lines, [{ reqId: 'r-4', trace_id: 't-1', msg: 'traced' }])
})
