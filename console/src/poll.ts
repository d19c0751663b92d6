/** Data that refreshes itself: loaded now, then again every POLL_MS while the page is visible ("live enough"). */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks'
import { describeError } from './api.js'

export const POLL_MS = 5000

export interface Polled<T> {
  value: T | undefined
  error: string | undefined
  loading: boolean
  reload: () => Promise<void>
}

export function usePolled<T>(load: () => Promise<T>, deps: unknown[], intervalMs: number | null = POLL_MS): Polled<T> {
  const [value, setValue] = useState<T | undefined>(undefined)
  const [error, setError] = useState<string | undefined>(undefined)
  const [loading, setLoading] = useState(true)
  // The latest request wins: an older answer arriving late does not overwrite a newer one.
  const generation = useRef(0)
  const stableLoad = useCallback(load, deps)
  const reload = useCallback(async () => {
    const mine = ++generation.current
    try {
      const next = await stableLoad()
      if (mine !== generation.current) return
      setValue(next)
      setError(undefined)
    } catch (failure) {
      if (mine === generation.current) setError(describeError(failure))
    } finally {
      if (mine === generation.current) setLoading(false)
    }
  }, [stableLoad])
  useEffect(() => {
    setLoading(true)
    void reload()
    if (intervalMs === null) return undefined
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') void reload()
    }, intervalMs)
    return () => {
      clearInterval(timer)
      generation.current++
    }
  }, [reload, intervalMs])
  return { value, error, loading, reload }
}

export interface PagedPolled<Item> {
  items: Item[] | undefined
  error: string | undefined
  /** Another page follows. */
  more: boolean
  loadMore: () => Promise<void>
  reload: () => Promise<void>
}

/**
 * A paged list (`{ items, nextCursor }`): the first page polled as usePolled does, further pages
 * appended on request ("More") and kept until `deps` change.
 */
export function usePagedPolled<Item>(
  loadPage: (cursor?: string) => Promise<{ items: Item[]; nextCursor?: string | null }>,
  deps: unknown[],
): PagedPolled<Item> {
  const first = usePolled(() => loadPage(), deps)
  const [later, setLater] = useState<{ items: Item[]; cursor: string | null }>({ items: [], cursor: null })
  const [error, setError] = useState<string | undefined>(undefined)
  useEffect(() => setLater({ items: [], cursor: null }), deps)
  const cursor = later.items.length > 0 ? later.cursor : (first.value?.nextCursor ?? null)
  const loadMore = useCallback(async () => {
    if (!cursor) return
    try {
      const page = await loadPage(cursor)
      setLater((current) => ({ items: [...current.items, ...page.items], cursor: page.nextCursor ?? null }))
      setError(undefined)
    } catch (failure) {
      setError(describeError(failure))
    }
  }, [cursor, ...deps])
  return {
    items: first.value ? [...first.value.items, ...later.items] : undefined,
    error: first.error ?? error,
    more: cursor !== null,
    loadMore,
    reload: first.reload,
  }
}
