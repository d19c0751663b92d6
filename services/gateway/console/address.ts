/**
 * The console's address as people type it, `/console/` (with or without a query string), is
 * answered as `/console` (docs/console.md): the gateway's router sees the address rewritten, so no
 * route of the OpenAPI document ends in a slash and the page's own links stay absolute.
 */
const WITH_SLASH = '/console/'

export function consoleAddress(url: string | undefined): string {
  const address = url ?? '/'
  if (address === WITH_SLASH || address.startsWith(`${WITH_SLASH}?`)) return `/console${address.slice(WITH_SLASH.length)}`
  return address
}
