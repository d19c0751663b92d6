/**
 * Test support: a page of headless Chromium (Debian's `chromium`, which .ci/run installs), driven with
 * playwright-core, that records every console error (Chromium reports a Content-Security-Policy
 * violation as one). Tests skip with `browserMissing` as their reason where there is no browser.
 */
import { existsSync } from 'node:fs'
import { chromium, type Page } from 'playwright-core'
import { type Teardown, tempDir } from './harness.js'

const CHROMIUM = '/usr/bin/chromium'
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

/** A tap `skip` value: false when Chromium is there, else the reason and how to install it. */
export const browserMissing: string | false = existsSync(CHROMIUM)
  ? false
  : `no browser at ${CHROMIUM}: install Debian's chromium (apt-get install -y --no-install-recommends chromium), as .ci/run does`

/** A page of a fresh headless Chromium, closed on teardown, with every console error it reports from now on. */
export async function openBrowserPage(t: Teardown): Promise<{ page: Page; consoleErrors: string[] }> {
  const browser = await chromium.launchPersistentContext(tempDir(t, 'chromium-profile-'), {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_FLAGS,
  })
  t.teardown(() => browser.close())
  const page = await browser.newPage()
  page.setDefaultTimeout(20_000)
  return { page, consoleErrors: recordConsoleErrors(page) }
}

/** Every console error and uncaught page error from now on (Chromium reports a CSP violation as a console error). */
function recordConsoleErrors(page: Page): string[] {
  const errors: string[] = []
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text())
  })
  page.on('pageerror', (error) => errors.push(error.message))
  return errors
}
