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
