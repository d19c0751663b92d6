/** Instances: search by process, status, business-key prefix and incidents (`/query/instances`); each row links to its instance page. */
import { useId, useState } from 'preact/hooks'
import type { Schemas } from '../../sdk/fetch-client.js'
import type { Session } from './api.js'
import { ErrorMessage, InstanceLink, MoreButton, Status, when } from './common.js'
import { usePagedPolled } from './poll.js'
import { findInstances, type InstanceFilter } from './queries.js'

const STATUSES: Schemas['ProcessStatus'][] = ['running', 'failed', 'suspended', 'completed', 'cancelled']

export function Instances(props: { session: Session }): preact.JSX.Element {
  const [draft, setDraft] = useState<InstanceFilter>({})
  const [filter, setFilter] = useState<InstanceFilter>({})
  const rows = usePagedPolled((cursor) => findInstances(props.session, filter, cursor), [props.session, filter])
  const ids = { process: useId(), status: useId(), key: useId(), incident: useId() }
  return (
    <main id="main">
      <h2>Instances</h2>
      <form
        class="row"
        aria-label="Search instances"
        onSubmit={(event) => {
          event.preventDefault()
          setFilter({ ...draft })
        }}
      >
        <div>
          <label for={ids.process}>Process id</label>
          <input
            id={ids.process}
            value={draft.processId ?? ''}
            onInput={(event) => setDraft({ ...draft, processId: event.currentTarget.value.trim() })}
          />
        </div>
        <div>
          <label for={ids.status}>Status</label>
          <select
            id={ids.status}
            value={draft.status ?? ''}
            onChange={(event) => {
              const status = event.currentTarget.value as Schemas['ProcessStatus'] | ''
              const { status: _dropped, ...rest } = draft
              setDraft(status ? { ...rest, status } : rest)
            }}
          >
            <option value="">any</option>
            {STATUSES.map((status) => (
              <option key={status} value={status}>
                {status}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label for={ids.key}>Business key starts with</label>
          <input
            id={ids.key}
            value={draft.businessKey ?? ''}
            onInput={(event) => setDraft({ ...draft, businessKey: event.currentTarget.value.trim() })}
          />
        </div>
        <div>
          <label for={ids.incident}>Incident</label>
          <select
            id={ids.incident}
            value={draft.hasIncident === undefined ? '' : String(draft.hasIncident)}
            onChange={(event) => {
              const { hasIncident: _dropped, ...rest } = draft
              const value = event.currentTarget.value
              setDraft(value === '' ? rest : { ...rest, hasIncident: value === 'true' })
            }}
          >
            <option value="">any</option>
            <option value="true">with a failed thread</option>
            <option value="false">without</option>
          </select>
        </div>
        <button type="submit">Search</button>
      </form>
      <ErrorMessage error={rows.error} />
      {rows.items && rows.items.length === 0 ? <p class="muted">No instance matches.</p> : null}
      {rows.items && rows.items.length > 0 ? (
        <table>
          <caption class="muted">Newest first; refreshed every few seconds.</caption>
          <thead>
            <tr>
              <th scope="col">Business key</th>
              <th scope="col">Process</th>
              <th scope="col">Status</th>
              <th scope="col">Open tasks</th>
              <th scope="col">Incident</th>
              <th scope="col">Started</th>
              <th scope="col">Last change</th>
            </tr>
          </thead>
          <tbody>
            {rows.items.map((row) => (
              <tr key={row.processInstanceId}>
                <td>
                  <InstanceLink instance={row} />
                </td>
                <td>{row.processName}</td>
                <td>
                  <Status status={row.processStatus} />
                </td>
                <td>{row.openTaskCount}</td>
                <td>{row.hasIncident ? 'failed thread' : '—'}</td>
                <td>{when(row.processStart)}</td>
                <td>{when(row.lastUpdate)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <MoreButton more={rows.more} loadMore={rows.loadMore} what="instances" />
    </main>
  )
}
