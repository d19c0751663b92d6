/**
 * Threads that wait for time, messages and child instances (docs/models.md#timer, #receive,
 * #callprocess): the commit hooks that store what a change makes them wait for (timer jobs,
 * message subscriptions, child jobs) with the change, and the batch handlers that move them on.
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { AtomicWrite } from '../../../store/port.js'
import { ENGINE_DEPENDENCY_PLUGINS, engineDependencies } from '../instances/dependencies.js'
import { cancelChildHandler, childEndedHandler, childJobWrites, startChildHandler } from './call-process.js'
import { MessageCorrelation } from './messages/correlate.js'
import { subscriptionWrites } from './messages/subscriptions.js'
import { timerHandler, timerJobWrites } from './timers.js'

declare module 'fastify' {
  interface FastifyInstance {
    messageCorrelation: MessageCorrelation
  }
}

/** A batch job due now among the writes: the worker looks at once rather than at its next poll. */
function queuesJob(writes: readonly AtomicWrite[]): boolean {
  return writes.some((write) => write.collection === 'batchJobs' && write.kind !== 'deleteMany')
}

async function waitsPlugin(fastify: FastifyInstance): Promise<void> {
  const base = engineDependencies(fastify)
  const deps = { ...base, control: fastify.processControl, messages: fastify.messages, batchJobs: fastify.batchJobs }
  const metrics = fastify.engineMetrics
  const correlation = new MessageCorrelation(deps, (outcome) => metrics?.messageCorrelated(outcome))
  fastify.decorate('messageCorrelation', correlation)
  fastify.batchHandlers.set('timer', timerHandler(deps))
  fastify.batchHandlers.set('bufferedMessage', correlation.bufferedHandler())
  fastify.batchHandlers.set('startChild', startChildHandler(deps))
  fastify.batchHandlers.set('childEnded', childEndedHandler(deps))
  fastify.batchHandlers.set('cancelChild', cancelChildHandler(deps))
  const wake = (_change: unknown, writes: readonly AtomicWrite[]): void => {
    if (queuesJob(writes)) fastify.batchWorker.wake()
  }
  fastify.processInstances.addCommitHook({ name: 'timer jobs', writesFor: timerJobWrites, stored: wake })
  fastify.processInstances.addCommitHook({
    name: 'message subscriptions',
    writesFor: (change) => subscriptionWrites(fastify.messages, change),
    stored: wake,
  })
  fastify.processInstances.addCommitHook({ name: 'child instance jobs', writesFor: childJobWrites, stored: wake })
}

export default fp(waitsPlugin, {
  name: 'waits',
  dependencies: [...ENGINE_DEPENDENCY_PLUGINS, 'batch-worker', 'process-control', 'messages-repository'],
})
