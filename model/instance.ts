/**
 * A process instance as the API answers it and the store keeps it (docs/reference/instances.md): its tasks, threads, notes, files
 * and data, and the inform items shown with it. The runtime computes these; the store's collections
 * and both services read them.
 */
import type { ActionType, JsonObject } from './types.js'

/** `suspended`: every change is refused until it is resumed to the status it had (`suspendedFrom`). */
export type ProcessStatus = 'running' | 'failed' | 'completed' | 'cancelled' | 'suspended'
export type TaskStatus = 'open' | 'completed' | 'cancelled'
export type ThreadStatus = 'active' | 'waiting' | 'failed' | 'done'

export interface Task {
  taskId: string
  stepId: string
  name: string
  status: TaskStatus
  threadId: string
  swimlane: string
  /** Cleared when the task is in its swimlane's pool. */
  userId?: string
  userName?: string
  form?: string
  preForms?: string[]
  createdAt: string
  /** When the task is due (the step's `dueIn` or `dueDate`); absent when it has none. */
  dueDate?: string
  /** The positions (in the step's `escalations`) of the escalations that ran on the task. */
  escalated?: number[]
  completedAt?: string
  completedBy?: string
  actionType?: ActionType
}

export interface Thread {
  threadId: string
  stepId: string
  status: ThreadStatus
  /** For branch threads: the parallel step that forked them and the join they run to. */
  parentThreadId?: string
  join?: string
  error?: { message: string; code?: string }
  /** When the thread last failed (absent on failures stored before it was recorded). */
  failedAt?: string
  /** How often the thread was retried after failing (`/action/retry`, bulk retries); absent: never. */
  retries?: number
}

export interface Note {
  id: string
  note: string
  userId: string
  userName: string
  createdAt: string
  updateDate: string
}

export interface FileRecord {
  id: string
  storageHandle: string
  label: string
  fileName: string
  fileType: string
  size?: number
  /** The task the file was uploaded on, the uploader and when (the contract's File). */
  taskId?: string
  userId?: string
  uploadDate?: string
}

export interface ProcessInstance {
  processInstanceId: string
  processId: string
  processName: string
  businessKey: string
  appId: string
  organizationId: string
  modelVersion: number
  processStatus: ProcessStatus
  /** While suspended: the status it had, which the resume gives back. */
  suspendedFrom?: 'running' | 'failed'
  initiator: string
  processStart: string
  lastUpdate: string
  tasks: Task[]
  notes: Note[]
  files: FileRecord[]
  contributorUsers: string[]
  threads: Thread[]
}

export type DataInstance = JsonObject

/** What the runtime works on: one process instance and its form data. */
export interface ProcessState {
  processInstance: ProcessInstance
  dataInstance: DataInstance
}

export interface InformItem {
  key?: string
  label?: string
  header: string
  display?: boolean
}
