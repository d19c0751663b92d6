/** Test support: the fields by which a request (an action, a note, a file) names the task of an instance. */
import type { Session } from '../../openapi/generated/schemas.js'
import { formTask } from './workflow.js'

export interface TaskIds {
  processId: string
  processInstanceId: string
  businessKey: string
  taskId: string
}

/** The instance of `session` and one of its tasks: `taskId`, or else the one its form context is about. */
export function taskIds(session: Session, taskId = formTask(session).taskId): TaskIds {
  const { processId, processInstanceId, businessKey } = session.context.processInstance
  return { processId, processInstanceId, businessKey, taskId }
}
