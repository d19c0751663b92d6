#!/usr/bin/env node
// @ts-check
/**
 * Writes a data dir of the embedded store as an earlier release wrote it, with ended, cancelled and
 * running instances, their activities and notification records, the service's kind of indexes (a
 * unique one among them) and a collection that stays hot. The fixtures of store/embedded/cold-tier.test.ts:
 * - store/fixtures/layout-before-cold-tier/, by commit ea9b35c (layout 1: every document in memory
 *   and in the one `documents` table);
 * - store/fixtures/layout-before-rowid/, by commit 96e5b7e (layout 2: the ended ones cold, `documents`
 *   a WITHOUT ROWID table).
 *
 *   git worktree add --detach /tmp/prev 96e5b7e && (cd /tmp/prev && make build)
 *   node scripts/upgrade/make-layout-fixture.mjs /tmp/prev store/fixtures/layout-before-rowid
 *   (then keep only store.sqlite: remove the store.lock files and the files/ folder the writing process left)
 */
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'

const [previousTree, dataDir] = process.argv.slice(2)
if (!previousTree || !dataDir) throw new Error('usage: make-layout-fixture.mjs <built tree of the previous release> <data dir>')
const { EmbeddedStore } = await import(pathToFileURL(resolve(previousTree, 'dist/store/embedded/store.js')).href)

const store = EmbeddedStore.open({ dataDir })
const contexts = store.collection('contexts')
await contexts.createIndex({ businessKey: 1, processId: 1, appId: 1 })
await contexts.createIndex({ processId: 1, appId: 1, lastUpdate: -1 })
await contexts.createIndex({ processStatus: 1, lastUpdate: 1 }, { name: 'engine_ended_by_age' })
await contexts.createIndex({ ticket: 1 }, { unique: true })
const statuses = ['completed', 'cancelled', 'running']
const docs = Array.from({ length: 30 }, (_, i) => ({
  _id: `pi-${String(i).padStart(2, '0')}`,
  processId: 'leave',
  appId: 'app',
  organizationId: 'org',
  businessKey: `BK-${i}`,
  ticket: `T-${i}`,
  processStatus: statuses[i % 3],
  lastUpdate: new Date(Date.UTC(2025, 0, 1 + i)),
  version: 1,
  processInstance: { processStatus: statuses[i % 3], tags: ['a', `t${i % 2}`] },
}))
await contexts.insertMany(docs)
const activities = store.collection('activities')
await activities.createIndex({ processInstanceId: 1, timeStamp: -1 })
await activities.insertMany(
  docs.flatMap((doc, i) =>
    [0, 1].map((k) => ({
      _id: `act-${i}-${k}`,
      processInstanceId: doc._id,
      timeStamp: new Date(Date.UTC(2025, 0, 1 + i, k)).toISOString(),
      type: 'step',
    })),
  ),
)
const notifications = store.collection('notifications')
await notifications.createIndex({ appId: 1, 'processInstance.lastUpdate': -1 })
await notifications.insertMany(
  docs.map((doc) => ({
    _id: doc._id,
    appId: 'app',
    processInstance: { processStatus: doc.processStatus, lastUpdate: doc.lastUpdate.toISOString() },
  })),
)
await store.collection('users').insertOne({ _id: 'u1', userId: 'ada' })
await store.close()
