import { mayActOnTask, type Principal } from '../instances/authorization.js'
import type { ProcessInstance, Task } from '../../../runtime/types.js'

/**
 * The task a form context is about: the given candidates' (else the instance's) open tasks, the
 * newest the user may work on first, else the newest.
 */
export function taskForForm(instance: ProcessInstance, principal: Principal, candidates?: readonly Task[]): Task | undefined {
  const pool = (candidates && candidates.some((task) => task.status === 'open') ? candidates : instance.tasks).filter(
    (task) => task.status === 'open',
  )
  const newestFirst = [...pool].reverse().sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0))
  return newestFirst.find((task) => mayActOnTask(principal, task)) ?? newestFirst[0]
}
