/**
 * The signed-in session of the console: an SDK client (sdk/fetch-client.ts) for the public API of the
 * gateway that served the page, and the user it acts as. The console holds no secret of the service:
 * in `header` mode the user header names the chosen user, in `jwt` mode the person's own token goes
 * along, kept in this tab's sessionStorage only (docs/console.md#signing-in).
 */
import { type Schemas, WorkflowApiError, WorkflowFetchClient } from '../../sdk/fetch-client.js'

export type User = Schemas['User']
export type AuthMode = 'header' | 'jwt'

export interface Session {
  client: WorkflowFetchClient
  user: User
  organizationId: string
  appId: string
  mode: AuthMode
  isAdmin: boolean
}

export interface SignInData {
  organizationId: string
  appId: string
  mode: AuthMode
  /** header mode: the user to act as. */
  userId?: string
  /** jwt mode: the person's own bearer token. */
  token?: string
}

const STORAGE_KEY = 'workflow-console-sign-in'

/** The auth mode the gateway runs in, which it writes into the page (services/gateway/console/routes.ts). */
export function authMode(): AuthMode {
  const meta = document.querySelector('meta[name="workflow-auth-mode"]')
  return meta?.getAttribute('content') === 'jwt' ? 'jwt' : 'header'
}

export function clientFor(data: SignInData): WorkflowFetchClient {
  return new WorkflowFetchClient({
    baseUrl: location.origin,
    organizationId: data.organizationId,
    appId: data.appId,
    ...(data.mode === 'header' && data.userId ? { userId: data.userId } : {}),
    ...(data.mode === 'jwt' && data.token ? { token: data.token } : {}),
  })
}

/**
 * Signs in: the gateway says who the request identifies (`GET /me`), so a user id that is not a user
 * of the tenant, or a token it does not accept, is refused there.
 */
export async function signIn(data: SignInData): Promise<Session> {
  const client = clientFor(data)
  const user = await client.get('/me')
  sessionStorage.setItem(STORAGE_KEY, JSON.stringify(data))
  return { client, user, organizationId: data.organizationId, appId: data.appId, mode: data.mode, isAdmin: isAdmin(user) }
}

/** The sign-in of this tab, when there is one (a reload keeps it). */
export async function resumeSession(): Promise<Session | undefined> {
  const stored = sessionStorage.getItem(STORAGE_KEY)
  if (!stored) return undefined
  try {
    return await signIn(JSON.parse(stored) as SignInData)
  } catch {
    sessionStorage.removeItem(STORAGE_KEY)
    return undefined
  }
}

export function signOut(): void {
  sessionStorage.removeItem(STORAGE_KEY)
}

export function isAdmin(user: User): boolean {
  return (user.roles ?? []).includes('admin') || user.isSystemUser === true
}

/** What a failed call says to a person: the catalogue code and message of the error envelope. */
export function describeError(error: unknown): string {
  if (error instanceof WorkflowApiError) return `${error.message} (${error.code})`
  return error instanceof Error ? error.message : String(error)
}
