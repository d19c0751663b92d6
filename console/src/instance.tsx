/**
 * An instance (docs/console.md#instances): its diagram with the steps where it waits, counts, the
 * activity timeline, notes, files, `dataInstance`, and for admins the lifecycle actions (suspend,
 * resume, cancel, retry a failed thread, change step), each through its route
 * (docs/reference/lifecycle.md) — the routes refuse them to others anyway.
 */
import { useEffect, useId, useState } from 'preact/hooks'
import type { Schemas } from '../../sdk/fetch-client.js'
import type { Session } from './api.js'
import { ActionButton, ErrorMessage, Panel, Status, when } from './common.js'
import { Diagram } from './diagram.js'
import { Files, Notes } from './notes-files.js'
import { usePolled } from './poll.js'
import { diagramXml } from './queries.js'

type Activity = Schemas['ActivityRecord']
type ProcessInstance = Schemas['ProcessInstance']

/**
 * How often each step was entered: a user task's step by its tasks (one per visit), another step by
 * the activity records naming it (a function run, a move), displays left out.
 */
function visitsByStep(tasks: Schemas['Task'][], activity: Activity[]): Record<string, number> {
  const visits: Record<string, number> = {}
  for (const task of tasks) visits[task.stepId] = (visits[task.stepId] ?? 0) + 1
  const taskSteps = new Set(tasks.map((task) => task.stepId))
  for (const record of activity)
    if (record.stepId && !taskSteps.has(record.stepId) && record.type !== 'display')
      visits[record.stepId] = (visits[record.stepId] ?? 0) + 1
  return visits
}

/** The steps of a process model's body, in the model's order, with their names. */
function stepsOf(body: unknown): Array<{ id: string; name: string }> {
  const steps = (body as { steps?: Record<string, { name?: unknown }> }).steps ?? {}
  return Object.entries(steps).map(([id, step]) => ({ id, name: typeof step.name === 'string' ? step.name : id }))
}

function waitingSteps(instance: ProcessInstance): string[] {
  const open = instance.tasks.filter((task) => task.status === 'open').map((task) => task.stepId)
  const waiting = instance.threads
    .filter((thread) => thread.status === 'waiting' || thread.status === 'active')
    .map((thread) => thread.stepId)
  return [...new Set([...open, ...waiting])]
}

export function InstancePage(props: {
  session: Session
  processId: string
  businessKey: string
  processInstanceId: string
}): preact.JSX.Element {
  const { client } = props.session
  const ids = { processId: props.processId, processInstanceId: props.processInstanceId, businessKey: props.businessKey }
  const loaded = usePolled(async () => {
    const [entry] = await client.post('/query/processInstanceContextAndActivity', {
      body: {
        processId: props.processId,
        processInstances: [{ processInstanceId: props.processInstanceId, businessKey: props.businessKey }],
      },
    })
    if (!entry?.context) throw new Error(`No instance ${props.businessKey} that you may see`)
    return { context: entry.context, activity: entry.activity }
  }, [props.session, props.processInstanceId])
  const [steps, setSteps] = useState<Array<{ id: string; name: string }>>([])
  useEffect(() => {
    client
      .getModel(props.processId)
      .then((body) => setSteps(stepsOf(body)))
      .catch(() => setSteps([]))
  }, [props.session, props.processId])
  const [xml, setXml] = useState<string | undefined>(undefined)
  const [diagramError, setDiagramError] = useState<string | undefined>(undefined)
  useEffect(() => {
    diagramXml(props.session, props.processId)
      .then(setXml)
      .catch((failure: unknown) => setDiagramError(failure instanceof Error ? failure.message : String(failure)))
  }, [props.session, props.processId])

  if (!loaded.value)
    return (
      <main id="main">
        <h2>Instance {props.businessKey}</h2>
        <ErrorMessage error={loaded.error} />
        {loaded.error ? null : <p>Loading…</p>}
      </main>
    )
  const { context, activity } = loaded.value
  const instance = context.processInstance
  const tasks = instance.tasks
  const failedThreads = instance.threads.filter((thread) => thread.status === 'failed')
  const waiting = waitingSteps(instance)
  const newestTask = tasks.find((task) => task.status === 'open') ?? tasks[tasks.length - 1]
  const reload = (): void => void loaded.reload()
  return (
    <main id="main">
      <h2>
        {instance.processName} {instance.businessKey}
      </h2>
      <p>
        <Status status={instance.processStatus} /> started {when(instance.processStart)}, last change {when(instance.lastUpdate)}; model
        version {instance.modelVersion}.
      </p>
      <ErrorMessage error={loaded.error} />
      <Panel title="Diagram">
        <ErrorMessage error={diagramError} />
        {xml ? (
          <Diagram
            xml={xml}
            waiting={waiting}
            failed={failedThreads.map((thread) => thread.stepId)}
            visits={visitsByStep(tasks, activity)}
          />
        ) : diagramError ? null : (
          <p>Loading the diagram…</p>
        )}
        <p>
          {tasks.length} tasks ({tasks.filter((task) => task.status === 'open').length} open), {activity.length} activities,{' '}
          {instance.notes.length} notes, {instance.files.length} files.
        </p>
      </Panel>
      {props.session.isAdmin ? (
        <AdminActions session={props.session} instance={instance} steps={steps} failedThreads={failedThreads} onDone={reload} />
      ) : null}
      <div class="columns">
        <Panel title="Tasks">
          <table>
            <thead>
              <tr>
                <th scope="col">Task</th>
                <th scope="col">Status</th>
                <th scope="col">Assignee</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {tasks.map((task) => (
                <tr key={task.taskId}>
                  <td>{task.name}</td>
                  <td>
                    <Status status={task.status} />
                  </td>
                  <td>{task.userName ?? task.userId ?? `swimlane ${task.swimlane}`}</td>
                  <td>{when(task.createdAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </Panel>
        <Panel title="Activity">
          <ol class="timeline" tabIndex={0} aria-label="Activity timeline, newest first">
            {activity.map((record, index) => (
              <li key={`${record.timeStamp}-${index}`}>
                <span class="muted">{when(record.timeStamp)}</span> {record.type}
                {record.stepId ? ` at ${record.stepId}` : ''}{' '}
                {(record.userName ?? record.userId) ? `by ${record.userName ?? record.userId}` : ''}
              </li>
            ))}
          </ol>
        </Panel>
      </div>
      <div class="columns">
        <Notes session={props.session} instance={ids} notes={instance.notes} task={newestTask} onChange={reload} />
        <Files session={props.session} instance={ids} files={instance.files} task={newestTask} onChange={reload} />
      </div>
      <Panel title="Data (read-only)">
        <pre class="json" tabIndex={0} aria-label="dataInstance as JSON">
          {JSON.stringify(context.dataInstance, null, 2)}
        </pre>
      </Panel>
    </main>
  )
}

function AdminActions(props: {
  session: Session
  instance: ProcessInstance
  steps: Array<{ id: string; name: string }>
  failedThreads: Schemas['Thread'][]
  onDone: () => void
}): preact.JSX.Element {
  const { client } = props.session
  const { instance } = props
  const [reason, setReason] = useState('')
  const [stepId, setStepId] = useState('')
  const reasonId = useId()
  const stepInput = useId()
  const path = { processInstanceId: instance.processInstanceId }
  const status = instance.processStatus
  const ended = status === 'completed' || status === 'cancelled'
  return (
    <Panel title="Admin actions">
      <div class="row">
        <div>
          <label for={reasonId}>Reason (kept in the activity)</label>
          <input id={reasonId} value={reason} onInput={(event) => setReason(event.currentTarget.value)} />
        </div>
        {status === 'running' || status === 'failed' ? (
          <ActionButton
            label="Suspend"
            kind="secondary"
            run={() => client.post('/process/{processInstanceId}/suspend', { params: { path }, body: reason ? { reason } : {} })}
            onDone={props.onDone}
          />
        ) : null}
        {status === 'suspended' ? (
          <ActionButton
            label="Resume"
            run={() => client.post('/process/{processInstanceId}/resume', { params: { path }, body: {} })}
            onDone={props.onDone}
          />
        ) : null}
        {!ended ? (
          <ActionButton
            label="Cancel instance"
            kind="danger"
            run={() => client.post('/process/{processInstanceId}/cancel', { params: { path }, body: reason ? { reason } : {} })}
            onDone={props.onDone}
          />
        ) : null}
      </div>
      {props.failedThreads.map((thread) => (
        <div class="row" key={thread.threadId}>
          <span>
            Thread at <strong>{thread.stepId}</strong> failed: {thread.error?.message ?? 'no message'}
            {thread.error?.code ? ` (${thread.error.code})` : ''}
          </span>
          <RetryButton session={props.session} processInstanceId={instance.processInstanceId} thread={thread} onDone={props.onDone} />
        </div>
      ))}
      <form class="row" aria-label="Change step" onSubmit={(event) => event.preventDefault()}>
        <div>
          <label for={stepInput}>Move to step</label>
          <select id={stepInput} value={stepId} onChange={(event) => setStepId(event.currentTarget.value)}>
            <option value="">Choose a step</option>
            {props.steps.map((step) => (
              <option key={step.id} value={step.id}>
                {step.name === step.id ? step.id : `${step.name} (${step.id})`}
              </option>
            ))}
          </select>
        </div>
        <ActionButton
          label="Change step"
          kind="secondary"
          disabled={stepId === ''}
          run={() =>
            client.post('/external/process/changeStep', {
              body: {
                processInstanceId: instance.processInstanceId,
                processId: instance.processId,
                businessKey: instance.businessKey,
                stepId,
              },
            })
          }
          onDone={props.onDone}
        />
      </form>
    </Panel>
  )
}

export function RetryButton(props: {
  session: Session
  processInstanceId: string
  thread: Pick<Schemas['Thread'], 'threadId' | 'stepId'>
  onDone: () => void
}): preact.JSX.Element {
  return (
    <ActionButton
      label={`Retry ${props.thread.stepId}`}
      run={() =>
        props.session.client.post('/action/retry', {
          body: { processInstanceId: props.processInstanceId, threadId: props.thread.threadId },
        })
      }
      onDone={props.onDone}
    />
  )
}
