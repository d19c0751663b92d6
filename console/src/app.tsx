/** The console's shell: sign-in, the navigation (admin pages for admins only), the page of the route. */
import { useEffect, useState } from 'preact/hooks'
import { resumeSession, type Session, signOut } from './api.js'
import { Inbox } from './inbox.js'
import { InstancePage } from './instance.js'
import { Instances } from './instances.js'
import { BatchJobs, Incidents, Webhooks } from './operations.js'
import { href, type Route, useRoute } from './router.js'
import { SignIn } from './sign-in.js'
import { StartPage, TaskPage } from './task.js'

const PAGES: Array<{ page: Route['page']; label: string; admin: boolean }> = [
  { page: 'inbox', label: 'Inbox', admin: false },
  { page: 'instances', label: 'Instances', admin: false },
  { page: 'incidents', label: 'Incidents', admin: true },
  { page: 'jobs', label: 'Batch jobs', admin: true },
  { page: 'webhooks', label: 'Webhooks', admin: true },
]

/** The navigation entry a page belongs to (an instance belongs to Instances, a task to the Inbox). */
function section(route: Route): Route['page'] {
  if (route.page === 'instance') return 'instances'
  if (route.page === 'task' || route.page === 'start') return 'inbox'
  return route.page
}

export function App(): preact.JSX.Element {
  const [session, setSession] = useState<Session | undefined>(undefined)
  const [resuming, setResuming] = useState(true)
  const [notice, setNotice] = useState<string | undefined>(undefined)
  const route = useRoute()
  useEffect(() => {
    void resumeSession().then((resumed) => {
      setSession(resumed)
      setResuming(false)
    })
  }, [])
  // A notice belongs to the page it was given for and the next one.
  useEffect(() => {
    const timer = setTimeout(() => setNotice(undefined), 15_000)
    return () => clearTimeout(timer)
  }, [notice])
  // A page's heading takes the focus when the route changes, so keyboard and screen-reader users start there.
  useEffect(() => {
    const heading = document.querySelector<HTMLElement>('main h2')
    heading?.setAttribute('tabindex', '-1')
    heading?.focus()
  }, [route])

  const current = section(route)
  const pages = PAGES.filter((entry) => !entry.admin || session?.isAdmin)
  return (
    <div>
      <a class="skip-link" href="#main">
        Skip to the page
      </a>
      <header class="top">
        <h1>Workflow console</h1>
        {session ? (
          <nav aria-label="Pages">
            <ul>
              {pages.map((entry) => (
                <li key={entry.page}>
                  <a href={href({ page: entry.page } as Route)} aria-current={current === entry.page ? 'page' : undefined}>
                    {entry.label}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
        ) : null}
        {session ? (
          <div class="who">
            <span>
              {session.user.fullName ?? session.user.userId} ({session.organizationId} / {session.appId}
              {session.isAdmin ? ', admin' : ''})
            </span>
            <button
              type="button"
              class="link"
              onClick={() => {
                signOut()
                setSession(undefined)
                setNotice(undefined)
              }}
            >
              Sign out
            </button>
          </div>
        ) : null}
      </header>
      {notice ? (
        <p class="notice" role="status">
          {notice}
        </p>
      ) : null}
      {resuming ? (
        <p>Loading…</p>
      ) : !session ? (
        <SignIn onSignedIn={setSession} />
      ) : (
        <Page session={session} route={route} onNotice={setNotice} />
      )}
    </div>
  )
}

function Page(props: { session: Session; route: Route; onNotice: (text: string) => void }): preact.JSX.Element {
  const { session, route } = props
  switch (route.page) {
    case 'task':
      return (
        <TaskPage session={session} processId={route.processId} processInstanceId={route.processInstanceId} onNotice={props.onNotice} />
      )
    case 'start':
      return <StartPage session={session} processId={route.processId} />
    case 'instances':
      return <Instances session={session} />
    case 'instance':
      return <InstancePage key={route.processInstanceId} session={session} {...route} />
    case 'incidents':
      return session.isAdmin ? <Incidents session={session} /> : <AdminOnly />
    case 'jobs':
      return session.isAdmin ? <BatchJobs session={session} /> : <AdminOnly />
    case 'webhooks':
      return session.isAdmin ? <Webhooks session={session} /> : <AdminOnly />
    default:
      return <Inbox session={session} />
  }
}

function AdminOnly(): preact.JSX.Element {
  return (
    <main id="main">
      <h2>For admins only</h2>
      <p>This page is for the tenant's admins.</p>
    </main>
  )
}
