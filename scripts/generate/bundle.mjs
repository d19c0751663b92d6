// @ts-check
/**
 * Bundles a hand-written OpenAPI document and the component files it points at into one
 * self-contained document whose every `$ref` is local (`#/components/...`). External refs such as
 * `./components/schemas.yaml#/User` become `#/components/schemas/User`, copied in with everything they
 * reference, so the served document, the linter and the TypeBox generator all see the same thing.
 */
import { readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { parse } from 'yaml'

/** @typedef {Record<string, any>} Json */

/** Which `components` section a component file feeds, by its file name. */
const SECTION_BY_FILE = /** @type {Record<string, string>} */ ({
  'schemas.yaml': 'schemas',
  'models.yaml': 'schemas',
  'parameters.yaml': 'parameters',
  'responses.yaml': 'responses',
})

const fileCache = new Map()

/** @param {string} path @returns {Json} */
export function loadYaml(path) {
  if (!fileCache.has(path)) fileCache.set(path, parse(readFileSync(path, 'utf8')))
  return fileCache.get(path)
}

/** @param {Json} root @param {string} pointer */
function resolvePointer(root, pointer) {
  if (pointer === '' || pointer === '/') return root
  return pointer
    .slice(1)
    .split('/')
    .map((part) => decodeURIComponent(part.replace(/~1/g, '/').replace(/~0/g, '~')))
    .reduce((node, key) => {
      if (node === undefined || node === null || !(key in node)) throw new Error(`Unresolvable JSON pointer ${pointer}`)
      return node[key]
    }, root)
}

/**
 * @param {string} documentPath absolute path of the OpenAPI document
 * @returns {Json} the bundled document
 */
export function bundle(documentPath) {
  const source = structuredClone(loadYaml(documentPath))
  /** @type {Json} */
  const components = { schemas: {}, parameters: {}, responses: {} }
  const baseDir = dirname(documentPath)

  /**
   * Rewrites refs in `node`, which was read from `fromFile`; copies referenced components in.
   * @param {any} node @param {string} fromFile @returns {any}
   */
  function rewrite(node, fromFile) {
    if (Array.isArray(node)) return node.map((item) => rewrite(item, fromFile))
    if (node === null || typeof node !== 'object') return node
    /** @type {Json} */
    const out = {}
    for (const [key, value] of Object.entries(node)) {
      out[key] = key === '$ref' && typeof value === 'string' ? localRef(value, fromFile) : rewrite(value, fromFile)
    }
    return out
  }

  /** @param {string} ref @param {string} fromFile @returns {string} */
  function localRef(ref, fromFile) {
    const [filePart, pointer = ''] = ref.split('#')
    const targetFile = filePart ? resolve(dirname(fromFile), filePart) : fromFile
    // Refs into the document itself stay as they are: its component entries are bundled up front.
    if (targetFile === documentPath) return `#${pointer}`
    const fileName = targetFile.split('/').pop() ?? ''
    const section = SECTION_BY_FILE[fileName]
    if (!section) throw new Error(`Refs into ${fileName} are not bundled (from ${fromFile})`)
    const name = pointer.replace(/^\//, '')
    copyComponent(section, name, targetFile, pointer)
    return `#/components/${section}/${name}`
  }

  /** @param {string} section @param {string} name @param {string} file @param {string} pointer */
  function copyComponent(section, name, file, pointer) {
    if (name in components[section]) return
    components[section][name] = {} // placeholder first: a schema may refer to itself
    components[section][name] = rewrite(resolvePointer(loadYaml(file), pointer), file)
  }

  // The document's own component section entries are aliases of component-file entries: resolve
  // them first so their names stay stable.
  for (const section of ['schemas', 'parameters', 'responses']) {
    for (const [name, entry] of Object.entries(source.components?.[section] ?? {})) {
      if (entry && typeof entry.$ref === 'string' && entry.$ref.includes('.yaml')) {
        const [filePart, pointer = ''] = entry.$ref.split('#')
        copyComponent(section, name, resolve(baseDir, filePart), pointer)
      } else if (!(name in components[section])) {
        components[section][name] = rewrite(entry, documentPath)
      }
    }
  }

  const { components: _ignored, ...rest } = source
  const bundled = rewrite(rest, documentPath)
  bundled.components = Object.fromEntries(
    Object.entries({ ...(source.components ?? {}), ...components })
      .filter(([, value]) => value && Object.keys(value).length > 0)
      .map(([section, value]) => [section, sortKeys(section in components ? components[section] : rewrite(value, documentPath))]),
  )
  return bundled
}

/** @param {Json} object */
function sortKeys(object) {
  return Object.fromEntries(
    Object.keys(object)
      .sort()
      .map((key) => [key, object[key]]),
  )
}

export { resolvePointer }
