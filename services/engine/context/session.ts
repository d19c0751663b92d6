/**
 * The session object the interactive endpoints answer (`/context`, `/action/*`): the context, the
 * form context of one task (its form, pre-forms, actions, who works in which swimlane, and whether
 * this user may only read it), and the model's swimlane descriptions.
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Session } from '../../../openapi/generated/schemas.js'
import { mayActOnTask, type Principal } from '../instances/authorization.js'
import type { TaskLockRepository } from '../tasks/locks.js'
import type { ActionType, CompiledProcess, ProcessInstance, ProcessState, Task } from '../../../runtime/types.js'
import type { SwimlaneMemberRepository } from '../tasks/swimlane-members.js'

declare module 'fastify' {
  interface FastifyInstance {
    sessions: SessionBuilder
  }
}

export interface ContextAction {
  actionType: ActionType
  customType?: string
  taskId?: string
}

export interface SessionRequest {
  principal: Principal
  state: ProcessState
  compiled: CompiledProcess
  /** The task the form context is about; none: an empty form context. */
  task?: Task | undefined
  /** Pre-forms skipped: the main form is what opens. */
  skipToForm?: boolean
  /** The userId holding the task's lock (null: nobody), when the caller knows it; looked up otherwise. */
  lockHolder?: string | null
  action?: ContextAction
  /** Messages of the function that ran (`/action/function`). */
  infoList?: string[]
}

type ContractInstance = Session['context']['processInstance']

/**
 * The instance as the contract answers it: the runtime's Note names its creation time `createdAt`,
 * the contract's `createDate`.
 */
export function contractInstance(instance: ProcessInstance): ContractInstance {
  return { ...instance, notes: instance.notes.map(({ createdAt, ...note }) => ({ ...note, createDate: createdAt })) }
}

export class SessionBuilder {
  constructor(
    private readonly locks: TaskLockRepository,
    private readonly members: SwimlaneMemberRepository,
  ) {}

  async build(request: SessionRequest): Promise<Session> {
    const { state, compiled, task } = request
    const context: Session['context'] = { dataInstance: state.dataInstance, processInstance: contractInstance(state.processInstance) }
    if (request.action) context.action = request.action
    if (request.infoList) context.infoList = request.infoList
    return {
      context,
      formContext: task ? await this.formContext(request, task) : {},
      swimlanes: { ...compiled.swimlanes },
    }
  }

  private async formContext(request: SessionRequest, task: Task): Promise<Session['formContext']> {
    const { principal, state, compiled } = request
    const step = compiled.step(task.stepId)
    const userTask = step?.type === 'userTask' ? step : undefined
    const open = task.status === 'open'
    const lockHolder = !open
      ? null
      : request.lockHolder !== undefined
        ? request.lockHolder
        : ((await this.locks.holder(task.taskId))?.userId ?? null)
    const lockedByOther = lockHolder !== null && lockHolder !== principal.userId
    const formContext: Session['formContext'] = {
      task,
      swimlanes: await this.members.membersOf(
        state.processInstance.appId,
        state.processInstance.organizationId,
        Object.keys(compiled.swimlanes),
      ),
      readOnly: !open || lockedByOther || !mayActOnTask(principal, task),
    }
    if (lockedByOther) formContext.lockedBy = lockHolder
    if (userTask?.form) formContext.form = userTask.form
    if (userTask?.preForms && userTask.preForms.length > 0 && !request.skipToForm) formContext.preForms = userTask.preForms
    if (userTask)
      formContext.actions = userTask.actions.map((action) =>
        action.customType ? { actionType: action.actionType, customType: action.customType } : { actionType: action.actionType },
      )
    return formContext
  }
}

async function sessionsPlugin(fastify: FastifyInstance): Promise<void> {
  fastify.decorate('sessions', new SessionBuilder(fastify.taskLocks, fastify.swimlaneMembers))
}

export default fp(sessionsPlugin, { name: 'sessions', dependencies: ['task-locks-repository', 'swimlane-members-repository'] })
