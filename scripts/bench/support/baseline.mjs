// @ts-check
/**
 * Another commit of this repository, checked out and built beside it, so that a bench measures it
 * and today's tree in one run on one machine (BENCH_BASELINE_REF). The tree is a git worktree under
 * .bench/trees/<commit> (ignored by git), installed and built once and reused by later runs.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT } from './dist.mjs'

const TREES = join(ROOT, '.bench', 'trees')

/** @param {string} command @param {string[]} args @param {string} cwd */
function run(command, args, cwd) {
  process.stdout.write(`  ${cwd === ROOT ? '' : `(in ${cwd}) `}${command} ${args.join(' ')}\n`)
  execFileSync(command, args, { cwd, stdio: ['ignore', 'inherit', 'inherit'] })
}

/**
 * The commit `ref` names, checked out, installed (npm ci) and built (tsc) under .bench/trees/.
 * Trees from before the examples moved into the repository read them from a `shared/examples`
 * folder beside their root: .bench/trees/shared/examples, a link to this repository's examples/,
 * so nothing outside the repository is read.
 * @param {string} ref a commit, tag or branch
 * @returns {{ commit: string, root: string, dist: string }}
 */
export function builtTree(ref) {
  const commit = execFileSync('git', ['rev-parse', '--verify', `${ref}^{commit}`], { cwd: ROOT, encoding: 'utf8' }).trim()
  const root = join(TREES, commit)
  if (!existsSync(root)) {
    mkdirSync(TREES, { recursive: true })
    run('git', ['worktree', 'add', '--detach', root, commit], ROOT)
  }
  const examplesBesideTrees = join(TREES, 'shared', 'examples')
  if (!existsSync(examplesBesideTrees)) {
    mkdirSync(join(TREES, 'shared'), { recursive: true })
    symlinkSync(join(ROOT, 'examples'), examplesBesideTrees)
  }
  if (!existsSync(join(root, 'node_modules'))) run('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], root)
  const dist = join(root, 'dist')
  if (!existsSync(join(dist, 'services', 'all-in-one.js'))) run('npx', ['tsc', '-p', '.'], root)
  return { commit, root, dist }
}
