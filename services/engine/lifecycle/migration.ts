/**
 * `POST /external/process/migrate`: moves the unended instances of a process from one model version
 * to another, each in its own compare-and-set commit with a `migrated` activity and a `Migrated`
 * notification; the instances that cannot move (runtime/migration.ts says why) are reported, not
 * touched. A dry run answers the same report and writes nothing. Admins of the tenant and system
 * users only.
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { EngineErrorCode } from '../../../openapi/generated/errors.js'
import type { MigrateRequest, MigrateResult } from '../../../openapi/generated/schemas.js'
import { type ErrorFactory, isServiceError } from '../../../plugins/errors/service-error.js'
import type { Actor } from '../../../plugins/identity/actor.js'
import type { Authorization } from '../instances/authorization.js'
import type { ContextRepository } from '../instances/repository.js'
import type { ProcessInstances } from '../instances/service.js'
import type { ProcessModels } from '../models/service.js'
import { type RunEnvironments, runtimeUserOf } from '../flow-host/environment.js'
import { planMigration, type StepMapping } from '../../../runtime/migration.js'
import type { CompiledProcess } from '../../../runtime/types.js'

declare module 'fastify' {
  interface FastifyInstance {
    migrations: MigrationService
  }
}

export interface MigrationDependencies {
  contexts: ContextRepository
  instances: ProcessInstances
  models: ProcessModels
  environments: RunEnvironments
  authorization: Authorization
  fail: ErrorFactory<EngineErrorCode>
}

type AdditionalHeaders = string | string[] | undefined

export class MigrationService {
  constructor(private readonly deps: MigrationDependencies) {}

  async migrate(actor: Actor, body: MigrateRequest, additionalHeaders: AdditionalHeaders): Promise<MigrateResult> {
    const { contexts, instances, environments, authorization, fail } = this.deps
    authorization.assertMayActForOthers(actor, 'migrate process instances')
    if (body.fromVersion === body.toVersion) {
      throw fail('wm3132', { args: [`fromVersion and toVersion are both ${body.toVersion}`], parameters: { field: 'body.toVersion' } })
    }
    const from = await this.version(actor, body, body.fromVersion)
    const to = await this.version(actor, body, body.toVersion)
    const mapping: StepMapping = body.stepMapping ?? {}
    this.checkMapping(mapping, from, to)

    const result: MigrateResult = { migrated: 0, skipped: [] }
    const env = await environments.create({
      actor: runtimeUserOf(actor),
      appId: actor.appId,
      organizationId: actor.organizationId,
      additionalHeaders,
    })
    for (const stored of await contexts.unendedOnVersion(actor, body.processId, body.fromVersion)) {
      const plan = planMigration(stored.processInstance, from.model.modelBody.steps, to.model.modelBody.steps, body.toVersion, mapping)
      if ('reason' in plan) {
        result.skipped.push({ processInstanceId: stored._id, reason: plan.reason })
        continue
      }
      if (body.dryRun !== true) {
        try {
          await instances.commit({
            previous: stored,
            state: { processInstance: plan.instance, dataInstance: stored.dataInstance },
            effects: [],
            compiled: to,
            env,
            actor,
            event: 'Migrated',
            // Moving a paused instance to a new version is an admin's repair, not progress: it stays suspended.
            allowedWhileSuspended: true,
            activities: [
              {
                type: 'migrated',
                details: {
                  fromVersion: body.fromVersion,
                  toVersion: body.toVersion,
                  ...(body.stepMapping ? { stepMapping: body.stepMapping } : {}),
                },
              },
            ],
          })
        } catch (error) {
          if (!isServiceError(error) || error.code !== 'wm3042') throw error
          result.skipped.push({ processInstanceId: stored._id, reason: 'the instance changed while it was being migrated; migrate again' })
          continue
        }
      }
      result.migrated++
    }
    return result
  }

  /** A live version of the process in the user's app (404 wm3002; a request naming another app finds none). */
  private async version(actor: Actor, body: MigrateRequest, version: number): Promise<CompiledProcess> {
    if (body.appId !== undefined && body.appId !== actor.appId) {
      throw this.deps.fail('wm3002', {
        args: [`${body.processId} version ${version} in app ${body.appId}`],
        parameters: { processId: body.processId, appId: body.appId },
      })
    }
    return this.deps.models.ofInstance({
      organizationId: actor.organizationId,
      appId: actor.appId,
      processId: body.processId,
      modelVersion: version,
    })
  }

  /** Every mapped step must be a step of fromVersion, mapped to a step of toVersion (400 wm3132). */
  private checkMapping(mapping: StepMapping, from: CompiledProcess, to: CompiledProcess): void {
    for (const [oldStep, newStep] of Object.entries(mapping)) {
      const field = `body.stepMapping.${oldStep}`
      if (!from.step(oldStep))
        throw this.deps.fail('wm3132', {
          args: [`stepMapping names step "${oldStep}", which version ${from.model.version} does not have`],
          parameters: { field },
        })
      if (!to.step(newStep))
        throw this.deps.fail('wm3132', {
          args: [`stepMapping maps "${oldStep}" to step "${newStep}", which version ${to.model.version} does not have`],
          parameters: { field },
        })
    }
  }
}

async function migrationPlugin(fastify: FastifyInstance): Promise<void> {
  fastify.decorate(
    'migrations',
    new MigrationService({
      contexts: fastify.contexts,
      instances: fastify.processInstances,
      models: fastify.processModels,
      environments: fastify.runEnvironments,
      authorization: fastify.authorization,
      fail: fastify.fail,
    }),
  )
}

export default fp(migrationPlugin, {
  name: 'migration-service',
  dependencies: ['contexts-repository', 'process-instances', 'process-models', 'run-environments', 'authorization', 'errors'],
})
