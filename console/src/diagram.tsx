/**
 * The process diagram: bpmn-js's viewer over the BPMN 2.0 XML the gateway exports of the model, with
 * a marker on each step where the instance waits (and one on failed steps) and the count of visits
 * of each step as an overlay. Its CSS comes bundled in console.css, so the page's
 * Content-Security-Policy needs no inline styles.
 */
import NavigatedViewer from 'bpmn-js/lib/NavigatedViewer'
import { useEffect, useRef, useState } from 'preact/hooks'
import { ErrorMessage } from './common.js'

interface Canvas {
  addMarker(elementId: string, marker: string): void
  zoom(level: 'fit-viewport'): void
}
interface Overlays {
  add(elementId: string, overlay: { position: { top?: number; right?: number }; html: HTMLElement }): void
}
interface ElementRegistry {
  get(elementId: string): unknown
}

export function Diagram(props: { xml: string; waiting: string[]; failed: string[]; visits: Record<string, number> }): preact.JSX.Element {
  const container = useRef<HTMLDivElement>(null)
  const [error, setError] = useState<string | undefined>(undefined)
  useEffect(() => {
    if (!container.current) return undefined
    const viewer = new NavigatedViewer({ container: container.current })
    let current = true
    viewer
      .importXML(props.xml)
      .then(() => {
        if (!current) return
        const canvas = viewer.get<Canvas>('canvas')
        const overlays = viewer.get<Overlays>('overlays')
        const registry = viewer.get<ElementRegistry>('elementRegistry')
        canvas.zoom('fit-viewport')
        for (const stepId of props.waiting) if (registry.get(stepId)) canvas.addMarker(stepId, 'waiting')
        for (const stepId of props.failed) if (registry.get(stepId)) canvas.addMarker(stepId, 'failed')
        for (const [stepId, count] of Object.entries(props.visits)) {
          if (!registry.get(stepId)) continue
          const badge = document.createElement('span')
          badge.className = 'visit-count'
          badge.textContent = String(count)
          badge.title = `${count} visit${count === 1 ? '' : 's'}`
          overlays.add(stepId, { position: { top: -10, right: 10 }, html: badge })
        }
      })
      .catch((failure: unknown) => current && setError(failure instanceof Error ? failure.message : String(failure)))
    return () => {
      current = false
      viewer.destroy()
    }
  }, [props.xml, props.waiting.join(), props.failed.join(), JSON.stringify(props.visits)])
  return (
    <div>
      <ErrorMessage error={error} />
      <div
        class="diagram"
        ref={container}
        role="img"
        aria-label={`Process diagram. Waiting at: ${props.waiting.join(', ') || 'nothing'}.${
          props.failed.length ? ` Failed at: ${props.failed.join(', ')}.` : ''
        }`}
        data-waiting={props.waiting.join(' ')}
      />
    </div>
  )
}
