/** Small pieces every page uses: errors, statuses, dates, a busy button. */
import type { ComponentChildren } from 'preact'
import { useState } from 'preact/hooks'
import { describeError } from './api.js'
import { href } from './router.js'

export function ErrorMessage(props: { error: string | undefined }): preact.JSX.Element | null {
  return props.error ? (
    <p class="error" role="alert">
      {props.error}
    </p>
  ) : null
}

export function Status(props: { status: string }): preact.JSX.Element {
  return <span class={`status status-${props.status}`}>{props.status}</span>
}

export function when(date: string | undefined | null): string {
  return date ? new Date(date).toLocaleString() : '—'
}

/**
 * A button that runs an async action: disabled while it runs, its failure shown beside it (role
 * alert, so a screen reader says it), `onDone` after success.
 */
export function ActionButton(props: {
  label: string
  run: () => Promise<unknown>
  onDone?: () => void
  kind?: 'primary' | 'secondary' | 'danger'
  disabled?: boolean
  describedBy?: string
}): preact.JSX.Element {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | undefined>(undefined)
  return (
    <span>
      <button
        type="button"
        class={props.kind && props.kind !== 'primary' ? props.kind : undefined}
        disabled={busy || props.disabled}
        aria-describedby={props.describedBy}
        onClick={async () => {
          setBusy(true)
          setError(undefined)
          try {
            await props.run()
            props.onDone?.()
          } catch (failure) {
            setError(describeError(failure))
          } finally {
            setBusy(false)
          }
        }}
      >
        {props.label}
      </button>
      {error ? (
        <span class="error" role="alert">
          {error}
        </span>
      ) : null}
    </span>
  )
}

export function Panel(props: { title: string; children: ComponentChildren; level?: 2 | 3 }): preact.JSX.Element {
  const Heading = props.level === 2 ? 'h2' : 'h3'
  return (
    <section class="panel" aria-label={props.title}>
      <Heading>{props.title}</Heading>
      {props.children}
    </section>
  )
}

/** "More": the next page of a paged list, while there is one. */
export function MoreButton(props: { more: boolean; loadMore: () => Promise<void>; what: string }): preact.JSX.Element | null {
  return props.more ? <ActionButton label={`More ${props.what}`} kind="secondary" run={props.loadMore} /> : null
}

/** The business key of an instance, linking to its page (instances, incidents). */
export function InstanceLink(props: {
  instance: { processId: string; businessKey: string; processInstanceId: string }
}): preact.JSX.Element {
  const { processId, businessKey, processInstanceId } = props.instance
  return <a href={href({ page: 'instance', processId, businessKey, processInstanceId })}>{businessKey}</a>
}
