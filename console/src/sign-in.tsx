/**
 * Sign in (docs/console.md#signing-in). In `header` mode the person picks a user of the tenant from
 * the gateway's user list (or types its id where the list is not open); in `jwt` mode they paste
 * their own token. Either way `GET /me` says who that is, and the console then acts only as that
 * user, through the same routes and checks as any client.
 */
import { useEffect, useId, useState } from 'preact/hooks'
import { authMode, clientFor, describeError, type Session, signIn, type User } from './api.js'
import { ErrorMessage } from './common.js'

const TENANT_KEY = 'workflow-console-tenant'
const JWT_SHAPE = /^[\w-]+\.[\w-]+\.[\w-]+$/

function rememberedTenant(): { organizationId: string; appId: string } {
  const query = new URLSearchParams(location.search)
  const stored = JSON.parse(localStorage.getItem(TENANT_KEY) ?? '{}') as { organizationId?: string; appId?: string }
  return {
    organizationId: query.get('organizationId') ?? stored.organizationId ?? '',
    appId: query.get('appId') ?? stored.appId ?? '',
  }
}

export function SignIn(props: { onSignedIn: (session: Session) => void }): preact.JSX.Element {
  const mode = authMode()
  const [tenant, setTenant] = useState(rememberedTenant)
  const [users, setUsers] = useState<User[] | undefined>(undefined)
  const [userId, setUserId] = useState('')
  const [token, setToken] = useState('')
  const [error, setError] = useState<string | undefined>(undefined)
  const ids = { organization: useId(), app: useId(), user: useId(), token: useId() }
  const complete = tenant.organizationId !== '' && tenant.appId !== ''

  useEffect(() => {
    if (mode !== 'header' || !complete) return
    let current = true
    clientFor({ ...tenant, mode })
      .get('/user/listWorkflowUsers')
      .then((list) => {
        if (!current) return
        setUsers(list)
        setError(undefined)
      })
      .catch((failure: unknown) => {
        if (!current) return
        setUsers(undefined)
        setError(`The users of this tenant cannot be listed: ${describeError(failure)}. Type a user id instead.`)
      })
    return () => {
      current = false
    }
  }, [mode, tenant.organizationId, tenant.appId])

  const submit = async (event: Event): Promise<void> => {
    event.preventDefault()
    setError(undefined)
    try {
      localStorage.setItem(TENANT_KEY, JSON.stringify(tenant))
      // A JWT's shape is checked here, so that a pasted paragraph is not sent as a credential.
      if (mode === 'jwt' && !JWT_SHAPE.test(token.trim())) throw new Error('This is not a JWT (header.payload.signature)')
      props.onSignedIn(await signIn(mode === 'header' ? { ...tenant, mode, userId } : { ...tenant, mode, token: token.trim() }))
    } catch (failure) {
      setError(describeError(failure))
    }
  }

  return (
    <main id="main">
      <h2>Sign in</h2>
      <p class="muted">
        The gateway runs in <strong>{mode}</strong> mode:{' '}
        {mode === 'header' ? 'choose the user to act as.' : 'paste your bearer token (it stays in this browser tab).'}
      </p>
      <form onSubmit={submit}>
        <div class="row">
          <div>
            <label for={ids.organization}>Organization</label>
            <input
              id={ids.organization}
              required
              value={tenant.organizationId}
              onInput={(event) => setTenant({ ...tenant, organizationId: event.currentTarget.value.trim() })}
            />
          </div>
          <div>
            <label for={ids.app}>App</label>
            <input
              id={ids.app}
              required
              value={tenant.appId}
              onInput={(event) => setTenant({ ...tenant, appId: event.currentTarget.value.trim() })}
            />
          </div>
        </div>
        {mode === 'header' ? (
          <div class="field">
            <label for={ids.user}>User</label>
            {users ? (
              <select id={ids.user} required value={userId} onChange={(event) => setUserId(event.currentTarget.value)}>
                <option value="">Choose a user</option>
                {users.map((user) => (
                  <option key={user.userId} value={user.userId}>
                    {user.fullName ?? user.userId} — {(user.roles ?? []).join(', ')}
                    {user.swimlanes?.length ? ` (${user.swimlanes.join(', ')})` : ''}
                  </option>
                ))}
              </select>
            ) : (
              <input id={ids.user} required value={userId} onInput={(event) => setUserId(event.currentTarget.value.trim())} />
            )}
          </div>
        ) : (
          <div class="field">
            <label for={ids.token}>Bearer token</label>
            <textarea id={ids.token} required rows={4} cols={60} value={token} onInput={(event) => setToken(event.currentTarget.value)} />
          </div>
        )}
        <ErrorMessage error={error} />
        <button type="submit">Sign in</button>
      </form>
    </main>
  )
}
