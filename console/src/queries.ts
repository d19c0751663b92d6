/**
 * The lists the console shows, each one page of a paged query of the public API
 * (docs/reference/queries.md): the caller's tasks, instances found by a filter, failed threads. The
 * engine answers only what the caller may see (docs/reference/identity.md#authorization-on-an-instance).
 */
import type { Schemas } from '../../sdk/fetch-client.js'
import type { Session } from './api.js'

export type TaskRow = Schemas['MyTask']
export type InstanceRow = Schemas['InstanceSummary']
export type Incident = Schemas['Incident']

export interface Page<Item> {
  items: Item[]
  nextCursor: string | null
}

export interface TaskFilter {
  processId?: string
  swimlane?: string
  assignedToMe?: boolean
}

export interface InstanceFilter {
  processId?: string
  status?: Schemas['ProcessStatus']
  /** A prefix of the business key. */
  businessKey?: string
  hasIncident?: boolean
}

/** How many rows a list shows at first; "More" asks for the next page. */
export const PAGE_SIZE = 50

/** Open tasks assigned to the caller or waiting in one of the caller's swimlanes, newest first. */
export function myTasks(session: Session, filter: TaskFilter, cursor?: string): Promise<Page<TaskRow>> {
  return session.client.post('/query/myTasks', { body: { ...filter, limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) } })
}

/** Instances the caller may see that match every given field of `filter`, newest first. */
export function findInstances(session: Session, filter: InstanceFilter, cursor?: string): Promise<Page<InstanceRow>> {
  return session.client.post('/query/instances', { body: { ...filter, limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) } })
}

/** Failed threads of the tenant's instances (admins: the route refuses others). */
export function incidents(session: Session, cursor?: string): Promise<Page<Incident>> {
  return session.client.post('/query/incidents', { body: { limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) } })
}

/** The BPMN 2.0 XML of a process model's live version, with its diagram (docs/reference/models.md#bpmn-export). */
export function diagramXml(session: Session, processId: string): Promise<string> {
  return session.client.getModelBpmn(processId)
}
