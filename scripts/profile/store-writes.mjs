#!/usr/bin/env node
// @ts-check
/**
 * What one write of a lifecycle costs the embedded store, apart from everything else: writers run
 * concurrently, each handing the store one write per atomic batch as the engine commits them, and
 * the CPU of every thread of this process (the store's memory side on the main thread, the journal
 * thread's SQLite, the checkpointer, V8's helpers) is read from /proc per write. The writes are
 * built by the engine's own repositories and commit hooks, over the indexes they declare:
 *
 * - `small document`: a two-field document replaced by `_id` (what any write costs at least);
 * - `superseded record delete`: what every change after the start adds to its batch for notification
 *   records, which are views of the instance (store/notification-records.ts): the delete of a record
 *   stored apart, by `_id`, with none stored;
 * - `activity record`: an insert, cold at once (instances/activities.ts);
 * - `escalation job`: a job inserted with its task and removed by its schedule key when the task
 *   ends (jobs/escalations/jobs.ts), counted as one write of the pair. Its escalation falls due
 *   within the hour, so the job is stored; a leave request's, after three days, stores none.
 *
 * Prints, per kind, the median of `rounds` of CPU per write, in all and on the main thread, each
 * round on a fresh store.
 *
 * Usage: npx tsc -p . && node scripts/profile/store-writes.mjs [writes=20000] [writers=32] [rounds=3]
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { randomUUID } from 'node:crypto'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { importBuilt } from '../bench/support/dist.mjs'
import { median } from '../bench/support/stats.mjs'

const WRITES = Number(process.argv[2] ?? 20_000)
const WRITERS = Number(process.argv[3] ?? 32)
const ROUNDS = Number(process.argv[4] ?? 3)

const { openStore } = await importBuilt('store/open.js')
const { activityRepository } = await importBuilt('services/engine/instances/activities.js')
const { notificationRepository } = await importBuilt('services/engine/events/notifications/repository.js')
const { batchJobRepository } = await importBuilt('services/engine/jobs/batch/repository.js')
const { escalationJobWrites } = await importBuilt('services/engine/jobs/escalations/jobs.js')

/** A running leave request's instance with one open task, as the engine stores it. @param {Date} now */
function runningInstance(now) {
  const at = now.toISOString()
  const userId = randomUUID()
  const task = { taskId: randomUUID(), stepId: 'approve', name: 'Approve leave', status: 'open', threadId: randomUUID() }
  return {
    processInstanceId: randomUUID(),
    processId: 'leave-request',
    processName: 'Leave request',
    businessKey: `LR-${randomUUID().slice(0, 12)}`,
    appId: 'hr',
    organizationId: 'acme',
    modelVersion: 1,
    processStatus: 'running',
    initiator: userId,
    processStart: at,
    lastUpdate: at,
    tasks: [{ ...task, swimlane: 'manager', createdAt: at, form: 'leave-form' }],
    notes: [],
    files: [],
    contributorUsers: [userId],
    threads: [{ threadId: task.threadId, stepId: 'approve', status: 'waiting' }],
  }
}

/** A model whose `approve` step escalates after 30 minutes (within the horizon): what escalationJobWrites reads of it. */
const escalatingModel = { step: () => ({ type: 'userTask', escalations: [{ after: 'PT30M', do: 'notify' }] }) }

/**
 * Each kind: the indexes its repository declares, and one write of it (an async step of a writer).
 * @type {Record<string, { prepare: (store: any) => Promise<(store: any) => Promise<unknown>> }>}
 */
const KINDS = {
  'small document': {
    prepare: async () => {
      const ids = Array.from({ length: WRITERS * 4 }, () => randomUUID())
      let n = 0
      return (store) => {
        const _id = ids[n++ % ids.length]
        return store.applyAtomically([
          { collection: 'profileSmall', kind: 'replaceOne', filter: { _id }, replacement: { _id, n }, upsert: true },
        ])
      }
    },
  },
  'superseded record delete': {
    prepare: async (store) => {
      const notifications = notificationRepository(store)
      await notifications.ensureIndexes()
      const ids = Array.from({ length: WRITERS * 4 }, () => randomUUID())
      let n = 0
      return (store) => store.applyAtomically(notifications.supersededRecordWrites(ids[n++ % ids.length]))
    },
  },
  'activity record': {
    prepare: async (store) => {
      const activities = activityRepository(store)
      await activities.ensureIndexes()
      return (store) => {
        const record = {
          processInstanceId: randomUUID(),
          timeStamp: new Date().toISOString(),
          userId: randomUUID(),
          userName: 'Employee 0',
        }
        return store.applyAtomically(
          activities.writesFor([{ ...record, type: 'complete', taskId: randomUUID(), stepId: 'request', details: {} }]),
        )
      }
    },
  },
  'escalation job': {
    prepare: async (store) => {
      await batchJobRepository(store).ensureIndexes()
      return async (store) => {
        const now = new Date()
        const instance = runningInstance(now)
        const task = instance.tasks[0]
        await store.applyAtomically(escalationJobWrites(undefined, instance, [{ kind: 'taskCreated', task }], escalatingModel, now))
        const ended = { ...instance, tasks: [{ ...task, status: 'completed' }] }
        await store.applyAtomically(escalationJobWrites(instance, ended, [], escalatingModel, now))
      }
    },
  },
}

/** CPU milliseconds of each thread of this process, by thread id. @returns {Map<string, number>} */
function threadCpuMs() {
  const cpu = new Map()
  for (const thread of readdirSync('/proc/self/task')) {
    const stat = readFileSync(`/proc/self/task/${thread}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    // utime and stime, in clock ticks of 10 ms.
    cpu.set(thread, (Number(fields[11]) + Number(fields[12])) * 10)
  }
  return cpu
}

/** `writes` writes by WRITERS writers at once. @param {any} store @param {(store: any) => Promise<unknown>} write @param {number} writes */
async function run(store, write, writes) {
  await Promise.all(
    Array.from({ length: WRITERS }, async () => {
      for (let i = 0; i < writes / WRITERS; i++) await write(store)
    }),
  )
}

/** One round of a kind on a fresh store: µs of CPU per write, in all and on the main thread. @param {string} kind */
async function round(kind) {
  const dataDir = mkdtempSync(join(tmpdir(), 'store-writes-'))
  const store = await openStore({ dataDir })
  try {
    const write = await (KINDS)/** @type {any} */ [kind]
      .prepare(store)
    await run(store, write, WRITES / 5)
    const before = threadCpuMs()
    await run(store, write, WRITES)
    const after = threadCpuMs()
    const main = String(process.pid)
    let total = 0
    for (const [thread, ms] of after) total += ms - (before.get(thread) ?? 0)
    return { total: (total * 1000) / WRITES, main: (((after.get(main) ?? 0) - (before.get(main) ?? 0)) * 1000) / WRITES }
  } finally {
    await store.close()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

process.stdout.write(`store writes: ${WRITES} per round by ${WRITERS} writers, ${ROUNDS} rounds, CPU per write (median)\n`)
for (const kind of Object.keys(KINDS)) {
  const rounds = []
  for (let i = 0; i < ROUNDS; i++) rounds.push(await round(kind))
  const total = median(rounds.map((r) => r.total))
  const main = median(rounds.map((r) => r.main))
  process.stdout.write(
    `  ${kind.padEnd(26)} ${total.toFixed(1).padStart(6)} µs in all, ${main.toFixed(1).padStart(6)} µs on the main thread\n`,
  )
}
