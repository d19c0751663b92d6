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

/**
 * The BPMN element of a step: the export names it `Step_` and the step id, characters an XML id may
 * not hold as `_` (services/gateway/models/bpmn/semantic.ts, which also makes colliding ids unique:
 * a step whose id collides that way is not marked).
 */
export function elementIdOf(stepId: string): string {
  return `Step_${stepId.replace(/[^A-Za-z0-9_.-]/g, '_')}`
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
        const marked = (stepIds: string[]) => stepIds.map(elementIdOf).filter((elementId) => registry.get(elementId))
        for (const elementId of marked(props.waiting)) canvas.addMarker(elementId, 'waiting')
        for (const elementId of marked(props.failed)) canvas.addMarker(elementId, 'failed')
        for (const [stepId, count] of Object.entries(props.visits)) {
          const elementId = elementIdOf(stepId)
          if (!registry.get(elementId)) continue
          const badge = document.createElement('span')
          badge.className = 'visit-count'
          badge.textContent = String(count)
          badge.title = `${count} visit${count === 1 ? '' : 's'}`
          overlays.add(elementId, { position: { top: -10, right: 10 }, html: badge })
        }
      })
      .catch((failure: unknown) => current && setError(failure instanceof Error ? failure.message : String(failure)))
    return () => {
      current = false
      viewer.destroy()
    }
  }, [props.xml, props.waiting.join(), props.failed.join(), JSON.stringify(props.visits)])
  return (
    <figure class="diagram-figure" aria-label="Process diagram">
      <ErrorMessage error={error} />
      <div class="diagram" ref={container} data-waiting={props.waiting.join(' ')} />
      <figcaption>
        Waiting at: <strong>{props.waiting.join(', ') || 'nothing'}</strong>.
        {props.failed.length ? ` Failed at: ${props.failed.join(', ')}.` : ''} The numbers are each step's visits.
      </figcaption>
    </figure>
  )
}
