/** The notes and files of an instance: listed, a note added, a file uploaded or downloaded, through the SDK. */
import { useId, useState } from 'preact/hooks'
import type { Schemas } from '../../sdk/fetch-client.js'
import type { Session } from './api.js'
import { ActionButton, Panel, when } from './common.js'

export interface InstanceRef {
  processId: string
  processInstanceId: string
  businessKey: string
}

/** The task notes and files are added on: the open task worked on, else the instance's newest task. */
export interface TaskRef {
  taskId: string
  stepId: string
}

export function Notes(props: {
  session: Session
  instance: InstanceRef
  notes: Schemas['Note'][]
  task: TaskRef | undefined
  onChange: () => void
}): preact.JSX.Element {
  const [text, setText] = useState('')
  const id = useId()
  const task = props.task
  return (
    <Panel title="Notes">
      {props.notes.length === 0 ? <p class="muted">No notes yet.</p> : null}
      <ul>
        {props.notes.map((note) => (
          <li key={note.id}>
            <strong>{note.userName ?? note.userId}</strong> <span class="muted">{when(note.createDate)}</span>
            <div>{note.note}</div>
          </li>
        ))}
      </ul>
      {task ? (
        <div class="row">
          <div>
            <label for={id}>New note</label>
            <textarea id={id} rows={2} cols={40} value={text} onInput={(event) => setText(event.currentTarget.value)} />
          </div>
          <ActionButton
            label="Add note"
            disabled={text.trim() === ''}
            run={() => props.session.client.post('/note/add', { body: { ...props.instance, taskId: task.taskId, note: text } })}
            onDone={() => {
              setText('')
              props.onChange()
            }}
          />
        </div>
      ) : null}
    </Panel>
  )
}

export function Files(props: {
  session: Session
  instance: InstanceRef
  files: Schemas['File'][]
  task: TaskRef | undefined
  onChange: () => void
}): preact.JSX.Element {
  const [file, setFile] = useState<File | undefined>(undefined)
  const [label, setLabel] = useState('')
  const fileId = useId()
  const labelId = useId()
  const task = props.task
  const download = async (record: Schemas['File']): Promise<void> => {
    const { blob, fileName } = await props.session.client.downloadBlob({
      processId: props.instance.processId,
      processInstanceId: props.instance.processInstanceId,
      businessKey: props.instance.businessKey,
      storageHandle: record.storageHandle,
    })
    const link = document.createElement('a')
    link.href = URL.createObjectURL(blob)
    link.download = fileName ?? record.fileName
    link.click()
    setTimeout(() => URL.revokeObjectURL(link.href), 0)
  }
  return (
    <Panel title="Files">
      {props.files.length === 0 ? <p class="muted">No files yet.</p> : null}
      <ul>
        {props.files.map((record) => (
          <li key={record.id}>
            {record.label} ({record.fileName}, {record.size ?? '?'} bytes) <span class="muted">{when(record.uploadDate)}</span>{' '}
            <ActionButton label={`Download ${record.fileName}`} kind="secondary" run={() => download(record)} />
          </li>
        ))}
      </ul>
      {task ? (
        <div class="row">
          <div>
            <label for={fileId}>File</label>
            <input id={fileId} type="file" onChange={(event) => setFile(event.currentTarget.files?.[0])} />
          </div>
          <div>
            <label for={labelId}>Label</label>
            <input id={labelId} type="text" value={label} onInput={(event) => setLabel(event.currentTarget.value)} />
          </div>
          <ActionButton
            label="Upload"
            disabled={!file}
            run={async () => {
              if (!file) return
              await props.session.client.uploadBlob(
                {
                  ...props.instance,
                  taskId: task.taskId,
                  taskDefinitionKey: task.stepId,
                  label: label || file.name,
                  fileName: file.name,
                },
                file,
              )
            }}
            onDone={() => {
              setFile(undefined)
              setLabel('')
              props.onChange()
            }}
          />
        </div>
      ) : null}
    </Panel>
  )
}
