// @ts-check
/**
 * The published JSON Schema of a model document (a file of examples/, the `model` of
 * `POST /model/insertModel`): the contract's `Model` component, with `modelBody` chosen by `type`,
 * and every schema it refers to under `$defs`. One source, openapi/components/models.yaml, serves
 * the OpenAPI documents (Swagger UI shows `ModelBody`) and this file (editors, CI checks of models).
 */

/** @typedef {Record<string, any>} Json */

const REF_PREFIX = '#/components/schemas/'

/** The body schema of each model type (the `title` of each `ModelBody` variant is its type). */
/** @param {Json} schemas */
function bodiesByType(schemas) {
  return Object.fromEntries(
    schemas.ModelBody.anyOf.map((/** @type {Json} */ variant) => {
      const name = variant.$ref.slice(REF_PREFIX.length)
      return [schemas[name].title, name]
    }),
  )
}

/** Refs rewritten to `$defs`, and the contract's `x-` extensions left out (not JSON Schema keywords). */
/** @param {unknown} node @returns {any} */
function toDefsRefs(node) {
  if (Array.isArray(node)) return node.map(toDefsRefs)
  if (node === null || typeof node !== 'object') return node
  return Object.fromEntries(
    Object.entries(node)
      .filter(([key]) => !key.startsWith('x-'))
      .map(([key, value]) => [
        key,
        key === '$ref' && typeof value === 'string' && value.startsWith(REF_PREFIX)
          ? `#/$defs/${value.slice(REF_PREFIX.length)}`
          : toDefsRefs(value),
      ]),
  )
}

/** @param {unknown} node @param {Set<string>} into */
function collectRefs(node, into) {
  if (Array.isArray(node)) return node.forEach((item) => collectRefs(item, into))
  if (node === null || typeof node !== 'object') return
  for (const [key, value] of Object.entries(node)) {
    if (key === '$ref' && typeof value === 'string' && value.startsWith(REF_PREFIX)) into.add(value.slice(REF_PREFIX.length))
    else collectRefs(value, into)
  }
}

/**
 * @param {Json} schemas the bundled gateway document's `components.schemas`
 * @returns {Json} a self-contained JSON Schema (2020-12)
 */
export function modelSchemaDocument(schemas) {
  const model = structuredClone(schemas.Model)
  const byType = bodiesByType(schemas)
  const names = new Set()
  const pending = [model]
  while (pending.length > 0) {
    const found = new Set()
    collectRefs(pending.pop(), found)
    for (const name of found) {
      if (names.has(name)) continue
      names.add(name)
      pending.push(schemas[name])
    }
  }
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: 'https://workflow-service.local/schemas/model.schema.json',
    title: 'Workflow model',
    ...toDefsRefs(model),
    allOf: Object.entries(byType).map(([type, name]) => ({
      if: { properties: { type: { const: type } }, required: ['type'] },
      then: { properties: { modelBody: { $ref: `#/$defs/${name}` } } },
    })),
    $defs: Object.fromEntries([...names].sort().map((name) => [name, toDefsRefs(schemas[name])])),
  }
}
