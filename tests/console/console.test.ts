// test-timeout-seconds: 600
/**
 * The console (docs/console.md) as people use it, in headless Chromium, through a real gateway and
 * engine: the employee signs in, starts a leave request and completes its form; a second manager
 * sees the task locked by the first, who approves it from the inbox; an admin finds a failed
 * instance among the incidents and retries it, suspends, resumes and moves another from its page,
 * whose diagram marks the step where it waits, and sees batch jobs and webhook deliveries (redeliver).
 * It fails on any console error (Content-Security-Policy violations included); every page gets a
 * screenshot (under the test's temp dir; also into CONSOLE_SCREENSHOTS_DIR when set, which is how
 * docs/screenshots/ is made) and an axe-core check with no serious or critical violation.
 * Skipped, saying how to install Chromium, where there is none.
 */
import { execFile } from 'node:child_process'
import { mkdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import axe from 'axe-core'
import t from 'tap'
import type { Session } from '../../openapi/generated/schemas.js'
import { repoRoot } from '../../lib/server/paths.js'
import { browserMissing, openBrowserPage } from '../../services/testing/browser.js'
import { tempDir } from '../../services/testing/harness.js'
import { storedInstance } from '../../services/testing/instance-store.js'
import { jwtAuthConfig, tokenFor } from '../../services/testing/tokens.js'
import { deployExample } from '../../services/testing/models.js'
import { createTestUser } from '../../services/testing/users.js'
import { waitUntil } from '../../services/testing/wait.js'
import { HR } from '../../services/testing/workflow.js'
import { startReceiver } from '../webhooks/support.js'
import { startControlStack } from '../process-control/stack.js'

interface AxeViolation {
  id: string
  impact: string | null
  help: string
  nodes: Array<{ target: unknown[] }>
}

t.test('the console: inbox, instances, incidents, batch jobs and webhooks, in a browser', { skip: browserMissing }, async (t) => {
  // The console as `make build` builds it, from the sources of this tree.
  await promisify(execFile)(process.execPath, [join(repoRoot, 'scripts', 'build', 'console.mjs')])
  const receiver = await startReceiver(t)
  const stack = await startControlStack(t, {
    webhooks: { allowedHosts: ['127.0.0.1'], timeoutMs: 10_000, backoffMs: 50 },
  })
  await deployExample(stack.store, 'leave-form', HR)
  const secondManager = await createTestUser(stack.store, { ...HR, fullName: 'Mia Manager', swimlanes: ['manager'] })
  const { users } = stack
  const { page, consoleErrors } = await openBrowserPage(t)
  const shots = [tempDir(t, 'console-screenshots-'), process.env.CONSOLE_SCREENSHOTS_DIR].filter((dir): dir is string => !!dir)
  for (const dir of shots) mkdirSync(dir, { recursive: true })

  /** A screenshot of the page as it is, and axe-core's serious and critical findings on it (none expected). */
  async function check(name: string): Promise<void> {
    for (const dir of shots) await page.screenshot({ path: resolve(dir, `${name}.png`), fullPage: true })
    // Evaluated through the DevTools protocol, so the page's Content-Security-Policy does not stop it.
    await page.evaluate(axe.source)
    const violations = await page.evaluate(async () => {
      const injected = (globalThis as unknown as { axe: { run: () => Promise<{ violations: AxeViolation[] }> } }).axe
      return (await injected.run()).violations
    })
    const grave = violations
      .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
      .map((violation) => `${violation.id}: ${violation.help} (${violation.nodes.map((node) => node.target.join(' ')).join('; ')})`)
    t.same(grave, [], `${name}: axe-core finds no serious or critical violation`)
  }

  async function signIn(fullName: string): Promise<void> {
    const signOut = page.getByRole('button', { name: 'Sign out' })
    if (await signOut.isVisible()) await signOut.click()
    await page.getByRole('heading', { name: 'Sign in' }).waitFor()
    await page.getByLabel('Organization').fill(HR.organizationId)
    await page.getByLabel('App').fill(HR.appId)
    const user = page.getByLabel('User')
    await user.locator('option', { hasText: fullName }).waitFor({ state: 'attached' })
    const value = await user.locator('option', { hasText: fullName }).getAttribute('value')
    await user.selectOption(value ?? '')
    await page.getByRole('button', { name: 'Sign in' }).click()
    // Signed in, the console stays on the page of the address; the test starts from the inbox.
    await page.getByRole('button', { name: 'Sign out' }).waitFor()
    await page.getByRole('link', { name: 'Inbox' }).click()
    await page.getByRole('heading', { name: 'Inbox' }).waitFor()
  }

  const answered = (path: string, status = 200) =>
    page.waitForResponse(
      (response) => new URL(response.url()).pathname === path && response.request().method() !== 'GET' && response.status() === status,
    )

  const loaded = await page.goto(`${stack.gatewayUrl}/console`)
  t.equal(loaded?.status(), 200, 'the console loads')
  t.match(loaded?.headers()['content-security-policy'], /script-src 'self'/, 'with a Content-Security-Policy')
  t.notMatch(loaded?.headers()['content-security-policy'], /unsafe-inline/, 'that allows no inline script or style')
  await page.getByRole('heading', { name: 'Sign in' }).waitFor()
  await page.getByLabel('Organization').fill(HR.organizationId)
  await page.getByLabel('App').fill(HR.appId)
  await page.getByLabel('User').locator('option', { hasText: 'Eve Employee' }).waitFor({ state: 'attached' })
  await check('sign-in')

  await t.test('the employee starts a leave request and completes its form', async (t) => {
    await signIn('Eve Employee')
    t.equal(await page.getByRole('link', { name: 'Incidents' }).count(), 0, 'no admin pages for a user')
    await page.getByLabel('Process to start').fill('leave-request')
    await page.getByRole('button', { name: 'Start…' }).click()
    await page.getByRole('heading', { name: 'Start Leave request' }).waitFor()
    await page.getByLabel('days (required)').fill('4')
    await page.getByLabel('reason').fill('Family visit')
    await check('start')
    await page.getByRole('button', { name: 'Start', exact: true }).click()
    await page.getByRole('heading', { name: 'Request leave' }).waitFor()
    t.equal(await page.getByLabel('Days').inputValue(), '4', 'the form shows the data the request started with')
    await page.getByLabel('Reason').fill('Family visit, two weeks ahead')
    await check('task-form')
    const completed = answered('/action/complete')
    await page.getByRole('button', { name: 'Complete' }).click()
    await completed
    await page.getByRole('status').filter({ hasText: 'Next: Approve leave' }).waitFor()
  })

  const [leave] = (
    await stack.send<Array<{ processInstance: { businessKey: string; processInstanceId: string } }>>(
      'listNotifications',
      'GET',
      `/notifications/hr?organizationId=acme&appId=hr`,
      { as: users.employee },
    )
  ).body.data
  const businessKey = leave!.processInstance.businessKey
  const leaveId = leave!.processInstance.processInstanceId
  t.equal((await storedInstance(stack.store, leaveId)).dataInstance.reason, 'Family visit, two weeks ahead', 'the form was stored')

  await t.test('the manager finds it in the inbox, another manager sees it locked, the first approves it', async (t) => {
    await signIn('Max Manager')
    const task = page.getByRole('link', { name: `Approve leave — ${businessKey}` })
    await task.waitFor()
    await check('inbox')
    await task.click()
    await page.getByRole('heading', { name: 'Approve leave' }).waitFor()
    await signIn(secondManager.fullName)
    await page.getByRole('link', { name: `Approve leave — ${businessKey}` }).click()
    await page.getByText('Locked by Max Manager').waitFor()
    t.equal(await page.getByRole('button', { name: 'Complete' }).count(), 0, 'no actions under another user’s lock')
    t.ok(await page.getByLabel('Days').isDisabled(), 'the form is read-only')
    await check('task-locked')
    await signIn('Max Manager')
    await page.getByRole('link', { name: `Approve leave — ${businessKey}` }).click()
    await page.getByRole('heading', { name: 'Approve leave' }).waitFor()
    await page.getByLabel('New note').fill('Enjoy your time off')
    const noted = answered('/note/add')
    await page.getByRole('button', { name: 'Add note' }).click()
    await noted
    await page.getByText('Enjoy your time off').waitFor()
    await page
      .getByLabel('File', { exact: true })
      .setInputFiles({ name: 'roster.txt', mimeType: 'text/plain', buffer: Buffer.from('Who covers when') })
    await page.getByLabel('Label', { exact: true }).fill('Cover roster')
    const uploaded = answered('/file/upload')
    await page.getByRole('button', { name: 'Upload' }).click()
    await uploaded
    const downloading = page.waitForEvent('download')
    await page.getByRole('button', { name: 'Download roster.txt' }).click()
    const download = await downloading
    t.equal(download.suggestedFilename(), 'roster.txt', 'the file downloads under its name')
    t.equal(readFileSync((await download.path())!, 'utf8'), 'Who covers when', 'with the bytes uploaded')
    const completed = answered('/action/complete')
    await page.getByRole('button', { name: 'Complete' }).click()
    await completed
    await page.getByRole('heading', { name: 'Inbox' }).waitFor()
    t.equal((await storedInstance(stack.store, leaveId)).processStatus, 'completed', 'approved: the leave request completed')
  })

  await t.test('an admin retries a failed instance from the incidents', async (t) => {
    const failed: Session = await stack.startFailedLeave()
    const failedKey = failed.context.processInstance.businessKey
    await signIn('Ada Admin')
    await page.getByRole('link', { name: 'Incidents' }).click()
    const row = page.getByRole('row').filter({ hasText: failedKey })
    await row.getByText('Payroll system is offline').waitFor()
    await check('incidents')
    await stack.payrollOnline(true)
    const retried = answered('/action/retry')
    await row.getByRole('button', { name: 'Retry updatePayroll' }).click()
    await retried
    await row.waitFor({ state: 'detached' })
    const status = (await storedInstance(stack.store, failed.context.processInstance.processInstanceId)).processStatus
    t.equal(status, 'completed', 'the retried instance ran to its end')
  })

  await t.test('an admin suspends, resumes and moves an instance from its page, whose diagram marks the waiting step', async (t) => {
    const running = await stack.startLeave()
    const runningKey = running.context.processInstance.businessKey
    await page.getByRole('link', { name: 'Instances' }).click()
    await page.getByLabel('Business key starts with').fill(runningKey)
    await page.getByRole('button', { name: 'Search' }).click()
    await page.getByRole('link', { name: runningKey }).click()
    await page.getByRole('heading', { name: `Leave request ${runningKey}` }).waitFor()
    const diagram = page.getByRole('figure', { name: 'Process diagram' })
    await diagram.locator('.djs-element.waiting[data-element-id="Step_request"]').waitFor()
    t.equal(await diagram.locator('.djs-element.waiting').count(), 1, 'the diagram marks the one step where it waits')
    t.match(await diagram.locator('figcaption').textContent(), /Waiting at: request\./, 'and names it')
    await check('instance')
    const suspended = answered(`/process/${running.context.processInstance.processInstanceId}/suspend`)
    await page.getByRole('button', { name: 'Suspend' }).click()
    await suspended
    await page.getByRole('button', { name: 'Resume' }).waitFor()
    t.equal((await storedInstance(stack.store, running.context.processInstance.processInstanceId)).processStatus, 'suspended')
    const resumed = answered(`/process/${running.context.processInstance.processInstanceId}/resume`)
    await page.getByRole('button', { name: 'Resume' }).click()
    await resumed
    await page.getByRole('button', { name: 'Suspend' }).waitFor()
    t.equal((await storedInstance(stack.store, running.context.processInstance.processInstanceId)).processStatus, 'running')
    await page.getByLabel('Move to step').selectOption('approve')
    const moved = answered('/external/process/changeStep')
    await page.getByRole('button', { name: 'Change step' }).click()
    await moved
    await diagram.locator('.djs-element.waiting[data-element-id="Step_approve"]').waitFor()
    const open = (await storedInstance(stack.store, running.context.processInstance.processInstanceId)).processInstance.tasks.filter(
      (task) => task.status === 'open',
    )
    t.same(
      open.map((task) => task.stepId),
      ['approve'],
      'moved: the instance waits at the approval, and the diagram marks it',
    )
  })

  await t.test('an admin sees batch jobs with their progress, and redelivers a webhook delivery', async (t) => {
    const bulk = await stack.send<{ jobId: string }>('startBulkOperation', 'POST', '/external/process/bulk', {
      as: users.admin,
      body: { ...HR, operation: 'suspend', filter: { processId: 'purchase' } },
    })
    t.equal(bulk.status, 200, 'a bulk job is queued')
    await page.getByRole('link', { name: 'Batch jobs' }).click()
    await page.getByRole('cell', { name: 'bulkOperation' }).waitFor()
    await check('batch-jobs')

    const subscription = await stack.send<{ subscriptionId: string }>('createSubscription', 'POST', '/subscription/create', {
      body: { ...HR, url: `${receiver.url}/hooks`, events: ['Created'] },
    })
    t.equal(subscription.status, 200, 'a subscription is created')
    await stack.startLeave()
    await waitUntil(
      () => receiver.received.length,
      (count) => count >= 1,
      60_000,
    )
    await page.getByRole('link', { name: 'Webhooks' }).click()
    const delivery = page.getByRole('row').filter({ hasText: 'Created' })
    await delivery.getByText('delivered').waitFor()
    await check('webhooks')
    const redelivered = answered(`/subscription/${subscription.body.data.subscriptionId}/redeliver`)
    await delivery.getByRole('button', { name: 'Redeliver' }).click()
    await redelivered
    await waitUntil(
      () => receiver.received.length,
      (count) => count >= 2,
      60_000,
    )
    t.equal(receiver.received[1]!.body.deliveryId, receiver.received[0]!.body.deliveryId, 'the same delivery, sent again')
  })

  t.same(consoleErrors, [], 'no console error, Content-Security-Policy violations included')
})

t.test('in jwt mode the console signs in with a pasted token, and acts as its user only', { skip: browserMissing }, async (t) => {
  await promisify(execFile)(process.execPath, [join(repoRoot, 'scripts', 'build', 'console.mjs')])
  const stack = await startControlStack(t, jwtAuthConfig())
  const { page, consoleErrors } = await openBrowserPage(t)
  // Typed with a trailing slash, as addresses often are: the same page, the query string kept.
  await page.goto(`${stack.gatewayUrl}/console/?organizationId=${HR.organizationId}&appId=${HR.appId}`)
  await page.getByRole('heading', { name: 'Sign in' }).waitFor()
  t.equal(await page.getByLabel('Organization').inputValue(), HR.organizationId, '/console/ is the console, with its query string')
  t.equal(await page.getByLabel('User').count(), 0, 'no user to pick: the token says who signs in')
  await page.getByLabel('Bearer token').fill(await tokenFor(stack.users.employee.userId))
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByText(`${stack.users.employee.fullName} (acme / hr)`).waitFor()
  t.equal(await page.getByRole('link', { name: 'Incidents' }).count(), 0, 'a user sees no admin page')
  await page.getByRole('button', { name: 'Sign out' }).click()
  await page.getByLabel('Bearer token').fill('not-a-token')
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('alert').filter({ hasText: 'not a JWT' }).waitFor()
  t.same(consoleErrors, [], 'no console error, Content-Security-Policy violations included')
})
