/** The inbox: the caller's open tasks and those waiting in the caller's swimlanes, refreshed on an interval. */
import { useId, useState } from 'preact/hooks'
import type { Session } from './api.js'
import { ErrorMessage, when } from './common.js'
import { usePolled } from './poll.js'
import { myTasks } from './queries.js'
import { href, navigate } from './router.js'

export function Inbox(props: { session: Session }): preact.JSX.Element {
  const tasks = usePolled(() => myTasks(props.session), [props.session])
  const [processId, setProcessId] = useState('')
  const processInput = useId()
  const processes = [...new Set((tasks.value ?? []).map((task) => task.processId))]
  return (
    <main id="main">
      <h2>Inbox</h2>
      <form
        class="row"
        aria-label="Start a process"
        onSubmit={(event) => {
          event.preventDefault()
          if (processId) navigate({ page: 'start', processId })
        }}
      >
        <div>
          <label for={processInput}>Process to start</label>
          <input
            id={processInput}
            list={`${processInput}-known`}
            required
            value={processId}
            onInput={(event) => setProcessId(event.currentTarget.value.trim())}
          />
          <datalist id={`${processInput}-known`}>
            {processes.map((id) => (
              <option key={id} value={id} />
            ))}
          </datalist>
        </div>
        <button type="submit">Start…</button>
      </form>
      <h3>My tasks and my swimlanes' tasks</h3>
      <ErrorMessage error={tasks.error} />
      {tasks.loading && !tasks.value ? <p>Loading…</p> : null}
      {tasks.value && tasks.value.length === 0 ? <p class="muted">Nothing waits for you.</p> : null}
      {tasks.value && tasks.value.length > 0 ? (
        <table>
          <caption class="muted">Newest first; refreshed every few seconds.</caption>
          <thead>
            <tr>
              <th scope="col">Task</th>
              <th scope="col">Process</th>
              <th scope="col">Business key</th>
              <th scope="col">Waiting for</th>
              <th scope="col">Created</th>
              <th scope="col">Due</th>
            </tr>
          </thead>
          <tbody>
            {tasks.value.map((task) => (
              <tr key={task.taskId}>
                <td>
                  <a href={href({ page: 'task', processId: task.processId, processInstanceId: task.processInstanceId })}>
                    {task.name} — {task.businessKey}
                  </a>
                </td>
                <td>{task.processName}</td>
                <td>{task.businessKey}</td>
                <td>
                  {task.assignee ?? `swimlane ${task.swimlane}`}
                  {task.lockedBy ? <span class="muted"> (locked by {task.lockedBy})</span> : null}
                </td>
                <td>{when(task.createdAt)}</td>
                <td>{when(task.dueDate)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </main>
  )
}
