/**
 * The docs' code blocks as tests run them: fenced blocks picked by their info string (```sh, or a
 * marked one such as ```sh jwt-walkthrough or ```ts sdk-sample), and a bash session that runs shell
 * blocks in order with `curl` checked (each call must answer 2xx, and its status is recorded).
 */
import { execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { repoRoot } from '../../lib/server/paths.js'

export interface DocBlock {
  file: string
  /** The block's first line in its file (1-based), for messages. */
  line: number
  source: string
}

/** The fenced blocks of a Markdown text whose info string is exactly `info` (e.g. `sh`, `ts sdk-sample`). */
export function fencedBlocks(file: string, markdown: string, info: string): DocBlock[] {
  const blocks: DocBlock[] = []
  const fence = /^```([^\n]*)\n([\s\S]*?)^```$/gm
  for (let match = fence.exec(markdown); match; match = fence.exec(markdown)) {
    if (match[1]!.trim() === info) blocks.push({ file, line: markdown.slice(0, match.index).split('\n').length, source: match[2]! })
  }
  return blocks
}

/** The blocks of a page of the repository (a path from its root) with that info string. */
export function pageBlocks(file: string, info: string): DocBlock[] {
  return fencedBlocks(file, readFileSync(join(repoRoot, file), 'utf8'), info)
}

/** How many curl invocations a block spells out (a loop may make more calls than this). */
export function curlsIn(block: DocBlock): number {
  return block.source.match(/(^|[\s|($])curl\s/gm)?.length ?? 0
}

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

export function commandMissing(command: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' })
    return false
  } catch {
    return true
  }
}

export interface BlocksRun {
  code: number | null
  stdout: string
  stderr: string
  /** `file:line` of the last block that started. */
  lastBlock: string | undefined
  /** The HTTP status of every curl call, in order. */
  statuses: string[]
}

/**
 * Runs the blocks in order as one bash session in `cwd`; `env` is all the environment it gets (PATH
 * and CURL_LOG are added). The statuses are recorded outside `cwd`, which may be the repository: a
 * record left there would be read again by the next run.
 */
export async function runShellBlocks(blocks: readonly DocBlock[], cwd: string, env: Record<string, string>): Promise<BlocksRun> {
  const logDir = mkdtempSync(join(tmpdir(), 'doc-blocks-'))
  const curlLog = join(logDir, 'curl-statuses.log')
  const script = [PRELUDE, ...blocks.map((block) => `echo ">>> ${block.file}:${block.line}" >&2\n${block.source}`)].join('\n')
  const run = spawn('bash', ['-c', script], {
    cwd,
    env: { PATH: process.env.PATH ?? '', ...env, CURL_LOG: curlLog },
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
    ?.slice(4)
  let statuses: string[] = []
  try {
    statuses = readFileSync(curlLog, 'utf8').trim().split('\n').filter(Boolean)
  } catch {
    // no curl ran
  }
  rmSync(logDir, { recursive: true, force: true })
  return { code, stdout, stderr, lastBlock, statuses }
}
