/**
 * The admin pages (docs/console.md#operations): incidents (failed threads, their errors, retry),
 * batch jobs (status, tries, last error, progress), and webhook deliveries per subscription (redeliver).
 * The console shows them to admins only; the routes refuse everyone else all the same.
 */
import { useId, useState } from 'preact/hooks'
import type { Schemas } from '../../sdk/fetch-client.js'
import type { Session } from './api.js'
import { ActionButton, ErrorMessage, InstanceLink, MoreButton, Panel, Status, when } from './common.js'
import { RetryButton } from './instance.js'
import { usePagedPolled, usePolled } from './poll.js'
import { incidents } from './queries.js'

export function Incidents(props: { session: Session }): preact.JSX.Element {
  const rows = usePagedPolled((cursor) => incidents(props.session, cursor), [props.session])
  return (
    <main id="main">
      <h2>Incidents</h2>
      <ErrorMessage error={rows.error} />
      {rows.items && rows.items.length === 0 ? <p class="muted">No failed thread.</p> : null}
      {rows.items && rows.items.length > 0 ? (
        <table>
          <caption class="muted">Failed threads, newest first; refreshed every few seconds.</caption>
          <thead>
            <tr>
              <th scope="col">Business key</th>
              <th scope="col">Process</th>
              <th scope="col">Failed step</th>
              <th scope="col">Error</th>
              <th scope="col">Failed at</th>
              <th scope="col">Retries</th>
              <th scope="col">Action</th>
            </tr>
          </thead>
          <tbody>
            {rows.items.map((row) => (
              <tr key={row.threadId}>
                <td>
                  <InstanceLink instance={row} />
                </td>
                <td>{row.processId}</td>
                <td>{row.stepId}</td>
                <td>
                  {row.message}
                  {row.errorCode ? ` (${row.errorCode})` : ''}
                </td>
                <td>{when(row.failedAt)}</td>
                <td>{row.retries}</td>
                <td>
                  <RetryButton
                    session={props.session}
                    processInstanceId={row.processInstanceId}
                    thread={{ threadId: row.threadId, stepId: row.stepId }}
                    onDone={() => void rows.reload()}
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <MoreButton more={rows.more} loadMore={rows.loadMore} what="incidents" />
    </main>
  )
}

const JOB_STATUSES: Array<Schemas['BatchJobSummary']['status']> = ['waiting', 'running', 'retrying', 'done', 'failed']

export function BatchJobs(props: { session: Session }): preact.JSX.Element {
  const [status, setStatus] = useState<Schemas['BatchJobSummary']['status'] | ''>('')
  const statusId = useId()
  const jobs = usePolled(
    () => props.session.client.post('/external/batchjob/list', { body: { limit: 100, ...(status ? { status } : {}) } }),
    [props.session, status],
  )
  return (
    <main id="main">
      <h2>Batch jobs</h2>
      <div class="row">
        <div>
          <label for={statusId}>Status</label>
          <select id={statusId} value={status} onChange={(event) => setStatus(event.currentTarget.value as typeof status)}>
            <option value="">any</option>
            {JOB_STATUSES.map((value) => (
              <option key={value} value={value}>
                {value}
              </option>
            ))}
          </select>
        </div>
        <ActionButton
          label="Retry the failed jobs of the last 24 hours"
          kind="secondary"
          run={() => props.session.client.post('/external/batchjob/retry', { body: { nHours: 24 } })}
          onDone={() => void jobs.reload()}
        />
      </div>
      <ErrorMessage error={jobs.error} />
      {jobs.value && jobs.value.items.length === 0 ? <p class="muted">No batch job.</p> : null}
      {jobs.value && jobs.value.items.length > 0 ? (
        <table>
          <caption class="muted">Newest first; refreshed every few seconds.</caption>
          <thead>
            <tr>
              <th scope="col">Kind</th>
              <th scope="col">Status</th>
              <th scope="col">Tries failed</th>
              <th scope="col">Progress</th>
              <th scope="col">Last error</th>
              <th scope="col">Next run</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {jobs.value.items.map((job) => (
              <tr key={job.jobId}>
                <td>{job.kind}</td>
                <td>
                  <Status status={job.status} />
                </td>
                <td>{job.tryCount}</td>
                <td>
                  {job.progress ? (
                    <span>
                      <progress
                        class="progress"
                        max={job.progress.total || 1}
                        value={job.progress.done}
                        aria-label={`Job ${job.jobId} progress`}
                      />{' '}
                      {job.progress.done} / {job.progress.total}
                      {job.progress.failed.length ? `, ${job.progress.failed.length} failed` : ''}
                    </span>
                  ) : (
                    '—'
                  )}
                </td>
                <td>{job.lastError ?? '—'}</td>
                <td>{when(job.nextRunAt)}</td>
                <td>{when(job.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </main>
  )
}

export function Webhooks(props: { session: Session }): preact.JSX.Element {
  const subscriptions = usePolled(() => props.session.client.get('/subscription/list'), [props.session])
  return (
    <main id="main">
      <h2>Webhook deliveries</h2>
      <ErrorMessage error={subscriptions.error} />
      {subscriptions.value && subscriptions.value.length === 0 ? <p class="muted">The tenant has no webhook subscription.</p> : null}
      {(subscriptions.value ?? []).map((subscription) => (
        <Deliveries key={subscription.subscriptionId} session={props.session} subscription={subscription} />
      ))}
    </main>
  )
}

function Deliveries(props: { session: Session; subscription: Schemas['SubscriptionSummary'] }): preact.JSX.Element {
  const { subscription } = props
  const path = { id: subscription.subscriptionId }
  const deliveries = usePolled(
    () => props.session.client.get('/subscription/{id}/deliveries', { params: { path, query: { limit: 50 } } }),
    [props.session, subscription.subscriptionId],
  )
  return (
    <Panel title={`Subscription ${subscription.url}`}>
      <p class="muted">
        Events {subscription.events.join(', ')}
        {subscription.processIds.length ? ` of ${subscription.processIds.join(', ')}` : ''}; since {when(subscription.createdAt)}.
      </p>
      <ErrorMessage error={deliveries.error} />
      {deliveries.value && deliveries.value.items.length === 0 ? <p class="muted">No delivery yet.</p> : null}
      {deliveries.value && deliveries.value.items.length > 0 ? (
        <table>
          <thead>
            <tr>
              <th scope="col">Event</th>
              <th scope="col">Status</th>
              <th scope="col">Tries</th>
              <th scope="col">Last answer</th>
              <th scope="col">Created</th>
              <th scope="col">Action</th>
            </tr>
          </thead>
          <tbody>
            {deliveries.value.items.map((delivery) => (
              <tr key={delivery.deliveryId}>
                <td>{delivery.eventType}</td>
                <td>
                  <Status status={delivery.status} />
                </td>
                <td>{delivery.tries}</td>
                <td>{delivery.lastError ?? (delivery.lastStatusCode === null ? '—' : `HTTP ${delivery.lastStatusCode}`)}</td>
                <td>{when(delivery.createdAt)}</td>
                <td>
                  <ActionButton
                    label="Redeliver"
                    kind="secondary"
                    describedBy={undefined}
                    run={() =>
                      props.session.client.post('/subscription/{id}/redeliver', {
                        params: { path },
                        body: { deliveryId: delivery.deliveryId },
                      })
                    }
                    onDone={() => void deliveries.reload()}
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </Panel>
  )
}
