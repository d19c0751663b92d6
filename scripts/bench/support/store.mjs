// @ts-check
/** The embedded store the benches seed before (or while) the service runs. */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { importBuilt } from './dist.mjs'

const { openStore } = await importBuilt('store/open.js')
const { deployExample } = await importBuilt('services/testing/models.js')

/**
 * A temporary folder for a bench's data, removed when `use` settles.
 * @template T @param {string} prefix @param {(dir: string) => Promise<T>} use @returns {Promise<T>}
 */
export async function withTempDir(prefix, use) {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  try {
    return await use(dir)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * The embedded store in `dataDir`, open while `use` runs (the service must not run on it meanwhile).
 * @template T @param {string} dataDir @param {(store: any) => Promise<T>} use @returns {Promise<T>}
 */
export async function withStore(dataDir, use) {
  const store = await openStore({ dataDir })
  try {
    return await use(store)
  } finally {
    await store.close()
  }
}

/**
 * Deploys the repository's example models named, in order, into one tenant.
 * @param {unknown} store @param {string[]} names @param {{ appId: string, organizationId: string }} tenant
 */
export async function deployExamples(store, names, tenant) {
  for (const name of names) await deployExample(store, name, tenant)
}
