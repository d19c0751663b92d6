import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { waitUntil } from '../../testing/wait.js'
import { PollLoop } from './poll-loop.js'

t.test('passes run one after another, every interval, until stop() — which leaves no timer behind', async (t) => {
  let passes = 0
  let overlapping = 0
  let running = false
  const loop = new PollLoop(
    15,
    async () => {
      if (running) overlapping++
      running = true
      passes++
      await sleep(10)
      running = false
    },
    (error) => t.fail(String(error)),
  )
  loop.start()
  // Until a few passes ran (on a loaded machine a fixed sleep may see fewer), then stop.
  await waitUntil(
    async () => passes,
    (count) => count >= 3,
  )
  await loop.stop(1_000)
  const stoppedAt = passes
  t.ok(stoppedAt >= 3, `it kept polling (${stoppedAt} passes)`)
  t.equal(overlapping, 0, 'no pass started while another ran')
  t.equal(loop.timerPending, false, 'no timer is set after stop()')
  await sleep(60)
  t.equal(passes, stoppedAt, 'no pass after stop()')
})

t.test('wake() runs the next pass at once instead of after the interval', async (t) => {
  let passes = 0
  const loop = new PollLoop(
    60_000,
    async () => void passes++,
    (error) => t.fail(String(error)),
  )
  /** The number of passes once it reached `count`, or after two seconds. */
  const passesOnceAt = (count: number) =>
    waitUntil(
      async () => passes,
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
  await sleep(20)
  t.equal(passes, 2, 'a stopped loop does not wake')
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
  await sleep(60)
  await loop.stop(1_000)
  t.match(errors, [{ message: 'store down' }])
  t.ok(passes > 1, 'later passes ran')
})

t.test('stop() waits for a running pass, at most the grace time', async (t) => {
  let finished = false
  const loop = new PollLoop(
    10,
    async () => {
      await sleep(80)
      finished = true
    },
    (error) => t.fail(String(error)),
  )
  loop.start()
  await sleep(10)
  await loop.stop(1_000)
  t.equal(finished, true, 'the pass finished before stop() resolved')

  const stuck = new PollLoop(
    10,
    () => new Promise<void>(() => undefined),
    (error) => t.fail(String(error)),
  )
  stuck.start()
  await sleep(10)
  const started = Date.now()
  // The loop's timers are unref'd: something must keep this test process alive while it waits.
  const keepAlive = setTimeout(() => undefined, 5_000)
  await stuck.stop(50)
  clearTimeout(keepAlive)
  t.ok(Date.now() - started < 500, 'a pass that never ends does not hold stop() beyond the grace time')
})
