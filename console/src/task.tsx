/**
 * A task opened from the inbox (docs/console.md#inbox): `POST /context` with `skipToForm` opens its
 * form and takes its lock (docs/reference/locks.md), or shows who holds it; the form is rendered from
 * the form model; Save, the step's actions (complete, return, cancel, function actions), notes and files.
 */
import { useEffect, useState } from 'preact/hooks'
import type { Schemas } from '../../sdk/fetch-client.js'
import { describeError, type Session } from './api.js'
import { ActionButton, ErrorMessage, Panel, Status } from './common.js'
import { DataForm } from './form.js'
import { Files, Notes } from './notes-files.js'
import { href, navigate } from './router.js'

type WorkSession = Schemas['Session']
type Data = Record<string, unknown>

const ACTION_LABELS: Record<string, string> = { complete: 'Complete', return: 'Return', cancel: 'Cancel the request' }
const ACTION_DONE: Record<string, string> = { complete: 'completed', return: 'returned', cancel: 'cancelled' }

export function TaskPage(props: {
  session: Session
  processId: string
  processInstanceId: string
  onNotice: (text: string) => void
}): preact.JSX.Element {
  const { client } = props.session
  const [work, setWork] = useState<WorkSession | undefined>(undefined)
  const [formModel, setFormModel] = useState<unknown>(undefined)
  const [data, setData] = useState<Data>({})
  const [lockHolder, setLockHolder] = useState<string | undefined>(undefined)
  const [error, setError] = useState<string | undefined>(undefined)
  const [info, setInfo] = useState<string[]>([])

  const open = async (): Promise<WorkSession> => {
    const opened = await client.post('/context', {
      body: { processId: props.processId, processInstanceId: props.processInstanceId, skipToForm: true },
    })
    setWork(opened)
    return opened
  }

  useEffect(() => {
    let current = true
    open()
      .then(async (opened) => {
        if (!current) return
        setData(opened.context.dataInstance as Data)
        const { form, lockedBy } = opened.formContext
        if (form) setFormModel(await client.getModel(form))
        // The users routes are admin endpoints in jwt mode: a user who is no admin sees the holder's id.
        if (lockedBy && (props.session.isAdmin || props.session.mode === 'header')) {
          const holder = await client.get('/user/getUserById/{userId}', { params: { path: { userId: lockedBy } } }).catch(() => null)
          if (current) setLockHolder(holder?.fullName ?? lockedBy)
        }
      })
      .catch((failure: unknown) => current && setError(describeError(failure)))
    return () => {
      current = false
    }
  }, [props.processId, props.processInstanceId])

  if (error)
    return (
      <main id="main">
        <h2>Task</h2>
        <ErrorMessage error={error} />
      </main>
    )
  if (!work)
    return (
      <main id="main">
        <h2>Task</h2>
        <p>Opening…</p>
      </main>
    )
  const instance = work.context.processInstance
  const task = work.formContext.task
  const ids = { processId: instance.processId, processInstanceId: instance.processInstanceId, businessKey: instance.businessKey }
  const readOnly = work.formContext.readOnly === true || !task
  const finished = (verb: string) => (next: WorkSession) => {
    const nextTask = next.formContext.task
    props.onNotice(
      `${task?.name ?? 'Task'} of ${instance.businessKey} ${verb}.` +
        (nextTask && nextTask.taskId !== task?.taskId
          ? ` Next: ${nextTask.name} (${nextTask.userName ?? `swimlane ${nextTask.swimlane}`}).`
          : ''),
    )
    navigate({ page: 'inbox' })
  }

  return (
    <main id="main">
      <h2>{task ? task.name : 'No open task'}</h2>
      <p>
        {instance.processName} <strong>{instance.businessKey}</strong> <Status status={instance.processStatus} />{' '}
        <a
          href={href({
            page: 'instance',
            processId: instance.processId,
            businessKey: instance.businessKey,
            processInstanceId: instance.processInstanceId,
          })}
        >
          Instance details
        </a>
      </p>
      {work.formContext.readOnly && work.formContext.lockedBy ? (
        <p class="notice" role="status">
          Locked by {lockHolder ?? work.formContext.lockedBy}: you can read this task but not work on it.
        </p>
      ) : null}
      {!task ? <p class="notice">This instance has no open task you may work on.</p> : null}
      <Panel title="Form">
        <form onSubmit={(event) => event.preventDefault()}>
          <DataForm model={formModel} data={data} readOnly={readOnly} onChange={setData} />
          {info.length > 0 ? (
            <ul role="status">
              {info.map((line) => (
                <li key={line}>{line}</li>
              ))}
            </ul>
          ) : null}
          {task && !readOnly ? (
            <div class="row">
              <ActionButton
                label="Save"
                kind="secondary"
                run={() => client.post('/action/save', { body: { ...ids, taskId: task.taskId, dataInstance: data } })}
                onDone={() => props.onNotice(`${task.name} of ${instance.businessKey} saved.`)}
              />
              {(work.formContext.actions ?? []).map((action) =>
                action.actionType === 'function' ? (
                  <ActionButton
                    key={`function-${action.customType}`}
                    label={`Run ${action.customType ?? 'function'}`}
                    kind="secondary"
                    run={async () => {
                      const answer = await client.post('/action/function', {
                        body: {
                          ...ids,
                          taskId: task.taskId,
                          dataInstance: data,
                          ...(action.customType ? { customType: action.customType } : {}),
                        },
                      })
                      setData(answer.context.dataInstance as Data)
                      setInfo((answer.context.infoList ?? []).map((entry) => (typeof entry === 'string' ? entry : JSON.stringify(entry))))
                    }}
                  />
                ) : (
                  <ActionButton
                    key={`${action.actionType}-${action.customType ?? ''}`}
                    // A custom variant of an action (`complete` with customType `askAgainIn3Days`) is its own button.
                    label={action.customType ?? ACTION_LABELS[action.actionType] ?? action.actionType}
                    kind={
                      action.actionType === 'cancel'
                        ? 'danger'
                        : action.actionType === 'complete' && !action.customType
                          ? 'primary'
                          : 'secondary'
                    }
                    run={async () =>
                      finished(ACTION_DONE[action.actionType] ?? action.actionType)(
                        await client.post('/action/complete', {
                          body: {
                            ...ids,
                            taskId: task.taskId,
                            actionType: action.actionType,
                            ...(action.customType ? { customType: action.customType } : {}),
                            dataInstance: data,
                          },
                        }),
                      )
                    }
                  />
                ),
              )}
            </div>
          ) : null}
        </form>
      </Panel>
      <div class="columns">
        <Notes
          session={props.session}
          instance={ids}
          notes={instance.notes}
          task={task ?? instance.tasks[0]}
          onChange={() => void open().catch((failure: unknown) => setError(describeError(failure)))}
        />
        <Files
          session={props.session}
          instance={ids}
          files={instance.files}
          task={task ?? instance.tasks[0]}
          onChange={() => void open().catch((failure: unknown) => setError(describeError(failure)))}
        />
      </div>
    </main>
  )
}

/** Starts an instance: the process model's `input` schema as a form, then its first task. */
export function StartPage(props: { session: Session; processId: string }): preact.JSX.Element {
  const { client } = props.session
  const [model, setModel] = useState<Data | undefined>(undefined)
  const [input, setInput] = useState<Data>({})
  const [error, setError] = useState<string | undefined>(undefined)
  useEffect(() => {
    client
      .getModel(props.processId)
      .then((body) => setModel(body as Data))
      .catch((failure: unknown) => setError(describeError(failure)))
  }, [props.processId])
  return (
    <main id="main">
      <h2>Start {typeof model?.name === 'string' ? model.name : props.processId}</h2>
      <ErrorMessage error={error} />
      {model ? (
        <form onSubmit={(event) => event.preventDefault()}>
          <DataForm model={model.input ?? {}} data={input} readOnly={false} onChange={setInput} />
          <ActionButton
            label="Start"
            run={async () => {
              const started = await client.post('/context', { body: { processId: props.processId, input } })
              const instance = started.context.processInstance
              navigate({ page: 'task', processId: instance.processId, processInstanceId: instance.processInstanceId })
            }}
          />
        </form>
      ) : null}
    </main>
  )
}
