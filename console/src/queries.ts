/**
 * The lists the console shows, each read from the public API: the caller's tasks, instances found
 * by a filter, failed instances. The gateway answers only what the caller may see
 * (docs/reference/identity.md#authorization-on-an-instance).
 */
import type { Schemas } from '../../sdk/fetch-client.js'
import type { Session } from './api.js'

export interface TaskRow {
  processId: string
  processName: string
  processInstanceId: string
  businessKey: string
  taskId: string
  stepId: string
  name: string
  swimlane: string
  assignee: string | undefined
  createdAt: string | undefined
  dueDate: string | undefined
  lockedBy: string | undefined
}

export interface InstanceRow {
  processId: string
  processName: string
  processInstanceId: string
  businessKey: string
  processStatus: Schemas['ProcessStatus']
  processStart: string | undefined
  lastUpdate: string | undefined
  /** The newest open task, when there is one. */
  task: string | undefined
}

export interface InstanceFilter {
  processId?: string
  status?: Schemas['ProcessStatus']
  /** A prefix of the business key. */
  businessKey?: string
}

/** The notification records the caller may see, newest change first: one per instance. */
async function visibleRecords(session: Session): Promise<Schemas['NotificationRecord'][]> {
  return session.client.get('/notifications/{appId}', { params: { path: { appId: session.appId }, query: { limit: 500 } } })
}

/** Open tasks assigned to the caller or waiting in one of the caller's swimlanes, newest first. */
export async function myTasks(session: Session): Promise<TaskRow[]> {
  const swimlanes = new Set(session.user.swimlanes ?? [])
  const rows: TaskRow[] = []
  for (const record of await visibleRecords(session)) {
    const task = record.task
    const instance = record.processInstance
    if (!task?.taskId || task.status !== 'open' || instance.processStatus !== 'running') continue
    const mine = task.userId ? task.userId === session.user.userId : swimlanes.has(task.swimlane ?? '')
    if (!mine) continue
    rows.push({
      processId: instance.processId ?? '',
      processName: instance.processName ?? instance.processId ?? '',
      processInstanceId: instance.processInstanceId,
      businessKey: instance.businessKey ?? '',
      taskId: task.taskId,
      stepId: task.stepId ?? '',
      name: task.name ?? task.stepId ?? '',
      swimlane: task.swimlane ?? '',
      assignee: task.userName ?? task.userId ?? undefined,
      createdAt: typeof task.createdAt === 'string' ? task.createdAt : undefined,
      dueDate: typeof task.dueDate === 'string' ? task.dueDate : undefined,
      lockedBy: undefined,
    })
  }
  return rows
}

/** Instances the caller may see that match every given field of `filter`, newest change first. */
export async function findInstances(session: Session, filter: InstanceFilter): Promise<InstanceRow[]> {
  return (await visibleRecords(session))
    .map((record): InstanceRow => {
      const instance = record.processInstance
      const task = record.task?.status === 'open' ? record.task : undefined
      return {
        processId: instance.processId ?? '',
        processName: instance.processName ?? instance.processId ?? '',
        processInstanceId: instance.processInstanceId,
        businessKey: instance.businessKey ?? '',
        processStatus: instance.processStatus ?? 'running',
        processStart: instance.processStart,
        lastUpdate: instance.lastUpdate,
        task: task ? (task.name ?? task.stepId) : undefined,
      }
    })
    .filter(
      (row) =>
        (!filter.processId || row.processId === filter.processId) &&
        (!filter.status || row.processStatus === filter.status) &&
        (!filter.businessKey || row.businessKey.startsWith(filter.businessKey)),
    )
}

export interface Incident extends InstanceRow {
  /** The failed threads with their errors. */
  threads: Schemas['Thread'][]
}

/** Failed instances with their failed threads (admins: the routes refuse others). */
export async function incidents(session: Session): Promise<Incident[]> {
  const failed = await findInstances(session, { status: 'failed' })
  const byProcess = new Map<string, InstanceRow[]>()
  for (const row of failed) byProcess.set(row.processId, [...(byProcess.get(row.processId) ?? []), row])
  const result: Incident[] = []
  for (const [processId, rows] of byProcess) {
    const contexts = await session.client.post('/query/processInstanceContextAndActivity', {
      body: { processId, processInstances: rows.map(({ processInstanceId, businessKey }) => ({ processInstanceId, businessKey })) },
    })
    for (const row of rows) {
      const context = contexts.find((entry) => entry.processInstanceId === row.processInstanceId)?.context
      result.push({ ...row, threads: (context?.processInstance.threads ?? []).filter((thread) => thread.status === 'failed') })
    }
  }
  return result
}

/** The BPMN 2.0 XML of a process model, with its diagram information. */
export async function diagramXml(_session: Session, _processId: string): Promise<string> {
  throw new Error('This gateway has no BPMN export of process models')
}
