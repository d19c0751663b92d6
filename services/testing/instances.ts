/** Test support: process-instance states built by hand, for unit tests that need no runtime. */
import type { ProcessInstance, ProcessState, Task } from '../../runtime/types.js'
import { HR } from './tenant.js'

export function sampleTask(overrides: Partial<Task> = {}): Task {
  return {
    taskId: 'task-1',
    stepId: 'request',
    name: 'Request leave',
    status: 'open',
    threadId: 'thread-1',
    swimlane: 'employee',
    createdAt: '2025-06-30T08:00:00.000Z',
    ...overrides,
  }
}

export function sampleInstance(overrides: Partial<ProcessInstance> = {}): ProcessInstance {
  return {
    ...HR,
    processInstanceId: 'pi-1',
    processId: 'leave-request',
    processName: 'Leave request',
    businessKey: 'LR-1',
    modelVersion: 1,
    processStatus: 'running',
    initiator: 'alice',
    processStart: '2025-06-30T08:00:00.000Z',
    lastUpdate: '2025-06-30T08:00:00.000Z',
    tasks: [sampleTask()],
    notes: [],
    files: [],
    contributorUsers: [],
    threads: [{ threadId: 'thread-1', stepId: 'request', status: 'waiting' }],
    ...overrides,
  }
}

export function sampleState(overrides: Partial<ProcessInstance> = {}, dataInstance: Record<string, unknown> = { days: 3 }): ProcessState {
  return { processInstance: sampleInstance(overrides), dataInstance }
}
