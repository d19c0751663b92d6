/** The inbox: the caller's open tasks and those waiting in the caller's swimlanes (`/query/myTasks`), refreshed on an interval. */
import { useId, useState } from 'preact/hooks'
import type { Session } from './api.js'
import { ErrorMessage, MoreButton, when } from './common.js'
import { usePagedPolled } from './poll.js'
import { myTasks, type TaskFilter } from './queries.js'
import { href, navigate } from './router.js'

export function Inbox(props: { session: Session }): preact.JSX.Element {
  const [filter, setFilter] = useState<TaskFilter>({})
  const tasks = usePagedPolled((cursor) => myTasks(props.session, filter, cursor), [props.session, filter])
  const [processId, setProcessId] = useState('')
  const ids = { process: useId(), filterProcess: useId(), swimlane: useId(), mine: useId() }
  const swimlanes = props.session.user.swimlanes ?? []
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
          <label for={ids.process}>Process to start</label>
          <input id={ids.process} required value={processId} onInput={(event) => setProcessId(event.currentTarget.value.trim())} />
        </div>
        <button type="submit">Start…</button>
      </form>
      <h3>My tasks and my swimlanes' tasks</h3>
      <div class="row" role="group" aria-label="Filter the tasks">
        <div>
          <label for={ids.filterProcess}>Process id</label>
          <input
            id={ids.filterProcess}
            value={filter.processId ?? ''}
            onChange={(event) => {
              const { processId: _dropped, ...rest } = filter
              const value = event.currentTarget.value.trim()
              setFilter(value ? { ...rest, processId: value } : rest)
            }}
          />
        </div>
        <div>
          <label for={ids.swimlane}>Swimlane</label>
          <select
            id={ids.swimlane}
            value={filter.swimlane ?? ''}
            onChange={(event) => {
              const { swimlane: _dropped, ...rest } = filter
              const value = event.currentTarget.value
              setFilter(value ? { ...rest, swimlane: value } : rest)
            }}
          >
            <option value="">all of mine</option>
            {swimlanes.map((swimlane) => (
              <option key={swimlane} value={swimlane}>
                {swimlane}
              </option>
            ))}
          </select>
        </div>
        <div class="field check">
          <input
            id={ids.mine}
            type="checkbox"
            checked={filter.assignedToMe === true}
            onChange={(event) => {
              const { assignedToMe: _dropped, ...rest } = filter
              setFilter(event.currentTarget.checked ? { ...rest, assignedToMe: true } : rest)
            }}
          />
          <label for={ids.mine}>Assigned to me only</label>
        </div>
      </div>
      <ErrorMessage error={tasks.error} />
      {!tasks.items && !tasks.error ? <p>Loading…</p> : null}
      {tasks.items && tasks.items.length === 0 ? <p class="muted">Nothing waits for you.</p> : null}
      {tasks.items && tasks.items.length > 0 ? (
        <table>
          <caption class="muted">Newest first; refreshed every few seconds.</caption>
          <thead>
            <tr>
              <th scope="col">Task</th>
              <th scope="col">Process</th>
              <th scope="col">Business key</th>
              <th scope="col">Waiting for</th>
              <th scope="col">Locked by</th>
              <th scope="col">Created</th>
              <th scope="col">Due</th>
            </tr>
          </thead>
          <tbody>
            {tasks.items.map((task) => (
              <tr key={task.taskId}>
                <td>
                  <a href={href({ page: 'task', processId: task.processId, processInstanceId: task.processInstanceId })}>
                    {task.name} — {task.businessKey}
                  </a>
                </td>
                <td>{task.processId}</td>
                <td>{task.businessKey}</td>
                <td>{task.userId ? (task.userId === props.session.user.userId ? 'you' : task.userId) : `swimlane ${task.swimlane}`}</td>
                <td>{task.lock ? (task.lock.userId === props.session.user.userId ? 'you' : task.lock.userId) : '—'}</td>
                <td>{when(task.createdAt)}</td>
                <td>{when(task.dueDate)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <MoreButton more={tasks.more} loadMore={tasks.loadMore} what="tasks" />
    </main>
  )
}
