/**
 * Every `curl` in the docs runs, as written, against a live all-in-one: the `sh` blocks that call
 * curl, from README.md and then docs/*.md in name order, run as one bash session (so a page may use
 * what an earlier one set up, as a reader in one terminal would), with `BASE` pointing at the
 * service. Each curl must answer 2xx; a block ends at the first failure (`set -euo pipefail`).
 */
import { execFileSync, spawn } from 'node:child_process'
import { readdirSync, readFileSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { repoRoot } from '../../lib/server/paths.js'
import { spawnService } from '../../services/testing/child-service.js'
import { tempDir } from '../../services/testing/harness.js'

interface DocBlock {
  file: string
  /** The block's first line in its file (1-based), for messages. */
  line: number
  source: string
}

/** The ```sh blocks of a Markdown text that call curl (a block of other commands is not run). */
function curlBlocks(file: string, markdown: string): DocBlock[] {
  const blocks: DocBlock[] = []
  const fence = /^```sh\n([\s\S]*?)^```$/gm
  for (let match = fence.exec(markdown); match; match = fence.exec(markdown)) {
    const source = match[1]!
    if (/\bcurl\b/.test(source)) blocks.push({ file, line: markdown.slice(0, match.index).split('\n').length, source })
  }
  return blocks
}

/** How many curl invocations a block spells out (a loop may make more calls than this). */
function curlsIn(block: DocBlock): number {
  return block.source.match(/(^|[\s|($])curl\s/gm)?.length ?? 0
}

const DOC_FILES = [
  'README.md',
  ...readdirSync(join(repoRoot, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
]

/**
 * `curl` as the docs call it, plus a record of each answer's status in CURL_LOG: the body still goes
 * to stdout (for the pipes the docs use), and a status other than 2xx fails the command.
 */
const PRELUDE = String.raw`
set -euo pipefail
curl() {
  local body status
  body=$(mktemp)
  if ! status=$(command curl -sS -o "$body" -w '%{http_code}' "$@"); then
    echo "curl could not complete: curl $*" >&2; rm -f "$body"; return 1
  fi
  echo "$status" >> "$CURL_LOG"
  cat "$body"; rm -f "$body"
  case "$status" in
    2*) return 0 ;;
    *) echo "HTTP $status from: curl $*" >&2; return 1 ;;
  esac
}
`

function commandMissing(command: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' })
    return false
  } catch {
    return true
  }
}

const missing = ['bash', 'curl', 'jq'].filter(commandMissing)

t.test(
  'every curl in README.md and docs/ answers 2xx when run in order against a live all-in-one',
  {
    timeout: 180_000,
    skip: missing.length > 0 ? `needs ${missing.join(', ')} on PATH (e.g. apt-get install ${missing.join(' ')})` : false,
  },
  async (t) => {
    const blocks = DOC_FILES.flatMap((file) => curlBlocks(file, readFileSync(join(repoRoot, file), 'utf8')))
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
    const curlLog = join(workDir, 'curl-statuses.log')

    const script = [PRELUDE, ...blocks.map((block) => `echo ">>> ${block.file}:${block.line}" >&2\n${block.source}`)].join('\n')
    const run = spawn('bash', ['-c', script], {
      cwd: workDir,
      env: { PATH: process.env.PATH ?? '', HOME: workDir, BASE: base, CURL_LOG: curlLog },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    run.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    run.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    const code = await new Promise<number | null>((resolve) => run.on('close', resolve))

    const lastBlock = stderr
      .split('\n')
      .filter((line) => line.startsWith('>>> '))
      .pop()
    t.equal(code, 0, `the docs' blocks ran to the end (last block started: ${lastBlock ?? 'none'})`, {
      stderr: stderr.slice(-4000),
      stdout: stdout.slice(-2000),
    })
    const statuses = readFileSync(curlLog, 'utf8').trim().split('\n')
    const spelledOut = blocks.reduce((sum, block) => sum + curlsIn(block), 0)
    t.ok(statuses.length >= spelledOut, `every curl the docs spell out ran (${statuses.length} calls for ${spelledOut} curls)`)
    t.same(
      statuses.filter((status) => !status.startsWith('2')),
      [],
      'every call answered 2xx',
    )
  },
)
