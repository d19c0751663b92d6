/**
 * The MongoDB adapter's own additions, checked against a recording stand-in for the driver's
 * collection (the contract suite checks the real thing when MONGODB_URI is set).
 */
import type { Collection as DriverCollection, Document } from 'mongodb'
import t from 'tap'
import { MongoCollection } from './collection.js'

interface Call {
  method: string
  args: unknown[]
}

/** A collection over a driver that records every call and answers null; `maxTimeMs` as the store sets it. */
function recordingCollection(maxTimeMs?: number): { calls: Call[]; collection: MongoCollection } {
  const calls: Call[] = []
  const driver = new Proxy(
    {},
    {
      get:
        (_target, method: string) =>
        (...args: unknown[]) => {
          calls.push({ method, args })
          return Promise.resolve(null)
        },
    },
  ) as DriverCollection<Document>
  return { calls, collection: new MongoCollection(driver, maxTimeMs) }
}

const HEX_ID = /^[0-9a-f]{24}$/

t.test('an upsert that does not fix its _id gets a generated string id on insert', async (t) => {
  const { calls, collection } = recordingCollection()
  await collection.updateOne({ key: 'k' }, { $set: { v: 1 }, $setOnInsert: { created: true } }, { upsert: true })
  await collection.updateMany({ $and: [{ key: 'k' }] }, { $set: { v: 1 } }, { upsert: true })
  await collection.findOneAndUpdate({ _id: { $in: ['a'] } }, { $set: { v: 1 } }, { upsert: true })
  const [one, many, claim] = calls.map((call) => call.args[1] as Document)
  t.match(one, { $set: { v: 1 }, $setOnInsert: { created: true, _id: HEX_ID } })
  t.match(many, { $setOnInsert: { _id: HEX_ID } })
  t.match(claim, { $setOnInsert: { _id: HEX_ID } }, 'an _id condition that is not an equality does not fix it')
})

t.test('updates that fix their _id, or are no upserts, go through unchanged', async (t) => {
  const { calls, collection } = recordingCollection()
  const updates: Array<[Document, Document, { upsert?: boolean }]> = [
    [{ _id: 'x' }, { $set: { v: 1 } }, { upsert: true }],
    [{ _id: { $eq: 'x' } }, { $set: { v: 1 } }, { upsert: true }],
    [{ $and: [{ _id: 'x' }] }, { $set: { v: 1 } }, { upsert: true }],
    [{ key: 'k' }, { $setOnInsert: { _id: 'mine' } }, { upsert: true }],
    [{ key: 'k' }, { $set: { v: 1 } }, {}],
  ]
  for (const [filter, update, options] of updates) await collection.updateOne(filter, update, options)
  calls.forEach((call, i) => t.equal(call.args[1], updates[i]?.[1], JSON.stringify(updates[i]?.[0])))
})

t.test('findOneAndUpdate asks the driver for the document itself', async (t) => {
  const { calls, collection } = recordingCollection()
  await collection.findOneAndUpdate({ _id: 'x' }, { $set: { v: 1 } }, { returnDocument: 'after', sort: { a: 1 } })
  t.same(calls[0]?.args[2], { returnDocument: 'after', sort: { a: 1 }, maxTimeMS: 10000, includeResultMetadata: false })
})

t.test('every operation that takes a filter carries maxTimeMS, so no query holds the server past the bound', async (t) => {
  const { calls, collection } = recordingCollection(1234)
  await collection.findOne({ a: { $regex: '^x' } })
  collection.find({ a: 1 }, { limit: 5 })
  await collection.countDocuments({ a: 1 })
  await collection.updateMany({ a: 1 }, { $set: { b: 2 } })
  await collection.deleteMany({ a: 1 })
  collection.aggregate([{ $match: { a: 1 } }])
  for (const call of calls) t.match(call.args.at(-1), { maxTimeMS: 1234 }, `${call.method} carries maxTimeMS`)
  t.match(calls[1]?.args[1], { limit: 5, maxTimeMS: 1234 }, "the caller's options are kept")
})
