/** Locations inside the repository, wherever the compiled code runs from (src or dist). */
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

function findRoot(start: string): string {
  let current = start
  while (!existsSync(join(current, 'package.json'))) {
    const parent = dirname(current)
    if (parent === current) throw new Error(`No package.json above ${start}`)
    current = parent
  }
  return current
}

export const repoRoot = findRoot(dirname(fileURLToPath(import.meta.url)))
export const packageJsonPath = join(repoRoot, 'package.json')
export const generatedOpenapiDir = join(repoRoot, 'openapi', 'generated')
/** The example models shipped with the project (`examples/`). */
export const examplesDir = join(repoRoot, 'examples')
