/**
 * Every `curl` in the docs runs, as written, against a live all-in-one: the `sh` blocks that call
 * curl, from README.md and then docs/*.md in name order, run as one bash session (so a page may use
 * what an earlier one set up, as a reader in one terminal would), with `BASE` pointing at the
 * service. Each curl must answer 2xx; a block ends at the first failure (`set -euo pipefail`).
 */
import { readdirSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { repoRoot } from '../../lib/server/paths.js'
import { spawnService } from '../../services/testing/child-service.js'
import { tempDir } from '../../services/testing/harness.js'
import { commandMissing, curlsIn, pageBlocks, runShellBlocks } from './doc-blocks.js'

const DOC_FILES = [
  'README.md',
  ...readdirSync(join(repoRoot, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
]

const missing = ['bash', 'curl', 'jq'].filter(commandMissing)

t.test(
  'every curl in README.md and docs/ answers 2xx when run in order against a live all-in-one',
  {
    timeout: 180_000,
    skip: missing.length > 0 ? `needs ${missing.join(', ')} on PATH (e.g. apt-get install ${missing.join(' ')})` : false,
  },
  async (t) => {
    // A ```sh block that calls curl runs; marked blocks (```sh jwt-walkthrough…) belong to other tests.
    const blocks = DOC_FILES.flatMap((file) => pageBlocks(file, 'sh')).filter((block) => /\bcurl\b/.test(block.source))
    t.ok(
      blocks.some((block) => block.file === 'README.md'),
      'the README has a quick start with curl',
    )
    for (const page of ['docs/api.md', 'docs/first-model.md'])
      t.ok(
        blocks.some((block) => block.file === page),
        `${page} has curl blocks`,
      )

    const service = spawnService('all-in-one', { DATA_DIR: tempDir(t) })
    t.teardown(async () => {
      service.child.kill('SIGTERM')
      await service.exited
    })
    const base = (await service.ready)['workflow-gateway']!

    // The blocks run in a directory of their own (they may write files), where examples/ is at hand
    // as in the repository's root.
    const workDir = tempDir(t, 'workflow-docs-')
    symlinkSync(join(repoRoot, 'examples'), join(workDir, 'examples'))
    const { code, stdout, stderr, lastBlock, statuses } = await runShellBlocks(blocks, workDir, { HOME: workDir, BASE: base })
    t.equal(code, 0, `the docs' blocks ran to the end (last block started: ${lastBlock ?? 'none'})`, {
      stderr: stderr.slice(-4000),
      stdout: stdout.slice(-2000),
    })
    const spelledOut = blocks.reduce((sum, block) => sum + curlsIn(block), 0)
    t.ok(statuses.length >= spelledOut, `every curl the docs spell out ran (${statuses.length} calls for ${spelledOut} curls)`)
    t.same(
      statuses.filter((status) => !status.startsWith('2')),
      [],
      'every call answered 2xx',
    )
  },
)
