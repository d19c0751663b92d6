/**
 * The parts of bpmn-moddle and bpmn-auto-layout the BPMN export uses: neither package declares the
 * types of its entry point (bpmn-moddle only of its meta-model, under `bpmn-moddle/types`).
 */
declare module 'bpmn-moddle' {
  /** An element of the BPMN meta-model; its properties depend on `$type`. */
  export interface ModdleElement {
    readonly $type: string
    id?: string
    name?: string
    $attrs?: Record<string, string>
    [property: string]: unknown
  }

  export interface ParseResult {
    rootElement: ModdleElement
    warnings: Array<{ message: string }>
    elementsById: Record<string, ModdleElement>
  }

  export class BpmnModdle {
    constructor(packages?: Record<string, unknown>)
    create(type: string, attributes?: Record<string, unknown>): ModdleElement
    toXML(element: ModdleElement, options?: { format?: boolean }): Promise<{ xml: string }>
    fromXML(xml: string, typeName?: string): Promise<ParseResult>
  }
}

declare module 'bpmn-auto-layout' {
  /** The BPMN XML with diagram information (shapes and edges) for the first process, replacing any it had. */
  export function layoutProcess(xml: string): Promise<string>
}
