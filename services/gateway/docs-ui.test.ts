/**
 * Swagger UI as a person uses it, in headless Chromium (Debian's `chromium`, which .ci/run installs):
 * the page loads, lists every documented operation, and "Try it out" → "Execute" gets the gateway's
 * answer. Skipped, saying how to install Chromium, where there is none.
 */
import t from 'tap'
import { loadOpenApiDocument } from '../../plugins/docs/plugin.js'
import { operationsOf } from '../testing/contract.js'
import { browserMissing, openBrowserPage } from '../testing/browser.js'
import { startService } from '../testing/harness.js'

const skip = browserMissing

t.test('Swagger UI at /docs loads, lists the endpoints, and a request sent from the page succeeds', { skip }, async (t) => {
  const gateway = await startService(t, 'gateway')
  const { page, consoleErrors } = await openBrowserPage(t)

  const loaded = await page.goto(`${gateway.url}/docs/`)
  t.equal(loaded?.status(), 200, 'the page loads')
  await page.locator('.opblock').first().waitFor()
  const document = loadOpenApiDocument('gateway')
  // The page lists the document's webhooks (what a subscription's receiver gets) as operations too.
  const webhooks = Object.keys((document as { webhooks?: Record<string, unknown> }).webhooks ?? {}).length
  const documented = operationsOf(document).length + webhooks
  t.equal(await page.locator('.opblock').count(), documented, `all ${documented} documented operations and webhooks are listed`)
  t.equal(await page.locator('#operations-Process-getProcessStatus').count(), 1, 'proxied engine operations among them')

  const liveness = page.locator('#operations-Health-getGatewayLiveness')
  await liveness.locator('.opblock-summary').click()
  const tryItOut = liveness.getByRole('button', { name: 'Try it out' })
  if (await tryItOut.count()) await tryItOut.click()
  const sent = page.waitForResponse((response) => response.url() === `${gateway.url}/liveness`)
  await liveness.getByRole('button', { name: 'Execute' }).click()
  t.equal((await sent).status(), 200, 'the page called the running gateway')
  const status = liveness.locator('.live-responses-table tr.response .response-col_status').first()
  await status.waitFor()
  t.equal((await status.textContent())?.trim(), '200', 'and shows its answer')
  t.match(
    await liveness.locator('.live-responses-table tr.response .response-col_description').first().textContent(),
    /"status": "success"/,
    'the answer body is the envelope',
  )
  t.same(consoleErrors, [], 'no console error, Content-Security-Policy violations included')
})

t.test("the engine's Swagger UI at /docs loads with no console error", { skip }, async (t) => {
  const engine = await startService(t, 'engine')
  const { page, consoleErrors } = await openBrowserPage(t)
  t.equal((await page.goto(`${engine.url}/docs/`))?.status(), 200, 'the page loads')
  await page.locator('.opblock').first().waitFor()
  t.same(consoleErrors, [], 'no console error, Content-Security-Policy violations included')
})
