#!/usr/bin/env node
// @ts-check
/**
 * Seeds an embedded store for lifecycle.mjs with the code of the tree whose build it is given, so a
 * baseline tree (support/baseline.mjs) stores its data in its own format: the leave-request models
 * and, per client, an employee and a manager. Prints the pairs as JSON on stdout.
 *
 * Usage: node seed-lifecycle.mjs <dist> <dataDir> <clients> <tenant as JSON>
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

const [dist, dataDir, clients, tenantJson] = process.argv.slice(2)
if (!dist || !dataDir || !clients || !tenantJson) throw new Error('usage: seed-lifecycle.mjs <dist> <dataDir> <clients> <tenant as JSON>')
const tenant = JSON.parse(tenantJson)

/** The first of `files` the build has (a module moved between releases), imported. @param {string[]} files @returns {Promise<any>} */
async function firstOf(...files) {
  const file = files.find((candidate) => existsSync(join(dist, candidate)))
  if (!file) throw new Error(`${dist} has none of ${files.join(', ')}`)
  return import(pathToFileURL(join(dist, file)).href)
}

const { openStore } = await firstOf('store/open.js', 'plugins/store/open.js')
const { deployExample } = await firstOf('services/testing/models.js')
const { createTestUser } = await firstOf('services/testing/users.js')

const EIGHT_DIGITS = '$substring($uuid(), 0, 8)'

/**
 * The example's business key is eight hex digits of a random UUID (32 bits), and leave-bookings holds
 * it under a unique index: among the 20,000-30,000 leave requests of one run two repeat with a
 * probability of about 5-10%, and that approval fails (wm3050, duplicate key) in either tree. The
 * bench's leave requests draw twelve (48 bits), which does not repeat within a run.
 * @param {Record<string, unknown>} body
 */
function longerBusinessKey(body) {
  const key = String(body.businessKey)
  if (!key.includes(EIGHT_DIGITS)) throw new Error(`the leave request's business key changed: ${key}`)
  body.businessKey = key.replace(EIGHT_DIGITS, '$substring($uuid(), 24, 12)')
}

const store = await openStore({ dataDir })
try {
  await deployExample(store, 'leave-request', { ...tenant, edit: longerBusinessKey })
  for (const example of ['hr-constants', 'leave-bookings']) await deployExample(store, example, tenant)
  const pairs = []
  for (let i = 0; i < Number(clients); i++) {
    const employee = await createTestUser(store, { ...tenant, fullName: `Employee ${i}`, swimlanes: ['employee'] })
    const manager = await createTestUser(store, { ...tenant, fullName: `Manager ${i}`, swimlanes: ['manager'] })
    pairs.push({ employee: employee.userId, manager: manager.userId })
  }
  process.stdout.write(JSON.stringify(pairs))
} finally {
  await store.close()
}
