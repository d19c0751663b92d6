import { setImmediate as nextTurn } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { held, waitUntil } from '../../testing/wait.js'
import { PollLoop } from './poll-loop.js'

/** A pass that counts itself; `loop.timerPending` and this count are what the tests observe, never the wall clock. */
function countingLoop(t: Pick<Test, 'fail'>, intervalMs: number, pass: () => Promise<void> = async () => undefined) {
  const counted = { passes: 0 }
  const loop = new PollLoop(
    intervalMs,
    async () => {
      counted.passes++
      await pass()
    },
    (error) => t.fail(String(error)),
  )
  return { loop, counted }
}

t.test('passes run one after another, every interval, until stop() — which leaves no timer behind', async (t) => {
  let overlapping = 0
  let running = false
  const { loop, counted } = countingLoop(t, 15, async () => {
    if (running) overlapping++
    running = true
    // A pass that spans a few turns of the event loop, so an overlapping one would have had the chance to start.
    for (let turn = 0; turn < 5; turn++) await nextTurn()
    running = false
  })
  loop.start()
  await waitUntil(
    () => counted.passes,
    (count) => count >= 3,
  )
  await loop.stop(1_000)
  const stoppedAt = counted.passes
  t.ok(stoppedAt >= 3, `it kept polling (${stoppedAt} passes)`)
  t.equal(overlapping, 0, 'no pass started while another ran')
  t.equal(loop.timerPending, false, 'no timer is set after stop()')
  // A loop with the same interval still running: once it passed three more times, a pass of the stopped one would have come.
  const witness = countingLoop(t, 15)
  witness.loop.start()
  await waitUntil(
    () => witness.counted.passes,
    (count) => count >= 3,
  )
  await witness.loop.stop(1_000)
  t.equal(counted.passes, stoppedAt, 'no pass after stop()')
})

t.test('wake() runs the next pass at once instead of after the interval', async (t) => {
  const { loop, counted } = countingLoop(t, 60_000)
  /** The number of passes once it reached `count`, or after two seconds. */
  const passesOnceAt = (count: number) =>
    waitUntil(
      () => counted.passes,
      (passed) => passed >= count,
      2_000,
    )
  loop.start()
  t.equal(await passesOnceAt(1), 1, 'the first pass runs at start')
  loop.wake()
  // The interval is a minute: a second pass within two seconds can only be the wake-up.
  t.equal(await passesOnceAt(2), 2, 'woken')
  await loop.stop(1_000)
  loop.wake()
  t.equal(loop.timerPending, false, 'a stopped loop does not wake: no pass is scheduled')
  t.equal(counted.passes, 2)
})

t.test('a failing pass is reported and the loop goes on', async (t) => {
  const errors: unknown[] = []
  let passes = 0
  const loop = new PollLoop(
    5,
    async () => {
      passes++
      if (passes === 1) throw new Error('store down')
    },
    (error) => errors.push(error),
  )
  loop.start()
  await waitUntil(
    () => passes,
    (count) => count >= 2,
  )
  await loop.stop(1_000)
  t.match(errors, [{ message: 'store down' }])
  t.ok(passes > 1, 'later passes ran')
})

t.test('stop() waits for a running pass, at most the grace time', async (t) => {
  let finished = false
  const pass = held()
  const { loop, counted } = countingLoop(t, 10, async () => {
    await pass.released
    finished = true
  })
  loop.start()
  await waitUntil(
    () => counted.passes,
    (count) => count >= 1,
  )
  const stopped = loop.stop(1_000)
  // Opened a full turn of the event loop later: a stop() that did not wait would have resolved before.
  setImmediate(pass.release)
  await stopped
  t.equal(finished, true, 'the pass finished before stop() resolved')

  const stuck = countingLoop(t, 10, () => new Promise<void>(() => undefined))
  stuck.loop.start()
  await waitUntil(
    () => stuck.counted.passes,
    (count) => count >= 1,
  )
  // The loop's timers are unref'd: something must keep this test process alive while it waits.
  const keepAlive = setTimeout(() => undefined, 5_000)
  await stuck.loop.stop(50)
  clearTimeout(keepAlive)
  t.pass('a pass that never ends does not hold stop(): it resolved at the end of the grace time')
})
