/** The console's pages are addressed by the URL's fragment (`/console#/instances/…`), so one HTML file serves them all. */
import { useEffect, useState } from 'preact/hooks'

export type Route =
  | { page: 'inbox' }
  | { page: 'task'; processId: string; processInstanceId: string }
  | { page: 'start'; processId: string }
  | { page: 'instances' }
  | { page: 'instance'; processId: string; businessKey: string; processInstanceId: string }
  | { page: 'incidents' }
  | { page: 'jobs' }
  | { page: 'webhooks' }

export function parseRoute(hash: string): Route {
  const [page = '', ...rest] = hash
    .replace(/^#\/?/, '')
    .split('/')
    .map((part) => decodeURIComponent(part))
  if (page === 'task' && rest.length === 2) return { page, processId: rest[0]!, processInstanceId: rest[1]! }
  if (page === 'start' && rest.length === 1) return { page, processId: rest[0]! }
  if (page === 'instances' && rest.length === 3)
    return { page: 'instance', processId: rest[0]!, businessKey: rest[1]!, processInstanceId: rest[2]! }
  if (page === 'instances' || page === 'incidents' || page === 'jobs' || page === 'webhooks') return { page }
  return { page: 'inbox' }
}

export function href(route: Route): string {
  switch (route.page) {
    case 'task':
      return `#/task/${encodeURIComponent(route.processId)}/${encodeURIComponent(route.processInstanceId)}`
    case 'start':
      return `#/start/${encodeURIComponent(route.processId)}`
    case 'instance':
      return `#/instances/${[route.processId, route.businessKey, route.processInstanceId].map(encodeURIComponent).join('/')}`
    default:
      return `#/${route.page}`
  }
}

export function navigate(route: Route): void {
  location.hash = href(route)
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash))
  useEffect(() => {
    const changed = (): void => setRoute(parseRoute(location.hash))
    addEventListener('hashchange', changed)
    return () => removeEventListener('hashchange', changed)
  }, [])
  return route
}
