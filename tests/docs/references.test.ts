import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { repoRoot } from '../../lib/server/paths.js'
import { brokenMarkdownLinks, brokenPaths, describe, outsideReferences, textFiles } from './references.js'

const files = textFiles(repoRoot)

t.test('no text file points outside the repository: no former reference document, section sign or issue number', async (t) => {
  const findings = files.flatMap((file) => outsideReferences(file, readFileSync(join(repoRoot, file), 'utf8')))
  t.equal(describe(findings), '', 'say it here, or point to docs/reference/')
})

t.test('every relative link and #anchor of every Markdown file resolves', async (t) => {
  t.equal(describe(brokenMarkdownLinks(repoRoot, files)), '')
})

t.test('every repository path written in docs and code comments names a file or folder, and its #anchor a heading', async (t) => {
  t.equal(describe(brokenPaths(repoRoot, files)), '')
})

t.test('the checks find what they look for, with the file and line', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'references-'))
  t.teardown(() => rmSync(root, { recursive: true, force: true }))
  execFileSync('git', ['init', '--quiet'], { cwd: root })
  mkdirSync(join(root, 'docs'))
  mkdirSync(join(root, 'store'))
  writeFileSync(join(root, 'docs/locks.md'), '# Locks\n\n## Taking a lock\n\n<a id="lapse"></a>The lock lapses.\n')
  writeFileSync(join(root, 'store/tenant.ts'), 'export const tenant = 1\n')
  const former = ['SP', 'EC.md'].join('')
  writeFileSync(
    join(root, 'store/port.ts'),
    [
      '/**',
      ` * As ${former} says; see docs/locks.md#taking-a-lock, docs/locks.md#lapse and store/tenant.js.`,
      ' * Broken: docs/locks.md#releasing, store/missing.ts, and [a link](../docs/none.md).',
      ' */',
      "const notAComment = 'store/also-missing.ts'",
      `// issue ${12} and issue #${3}; the ${'\u00a7'} of a standard; issue ${'"'}security" C`,
      '',
    ].join('\n'),
  )
  writeFileSync(join(root, 'docs/index.md'), '[locks](locks.md#taking-a-lock) [gone](gone.md) [no anchor](locks.md#nowhere)\n')
  const names = ['docs/index.md', 'docs/locks.md', 'store/port.ts', 'store/tenant.ts']
  t.same(
    names.flatMap((file) => outsideReferences(file, readFileSync(join(root, file), 'utf8'))).map(({ line, text }) => `${line} ${text}`),
    [`2 ${former}`, `6 issue ${12}`, `6 issue #${3}`, `6 ${'\u00a7'}`, `6 issue ${'"'}security"`],
  )
  t.same(
    brokenPaths(root, names).map(({ file, line, target }) => `${file}:${line} ${target}`),
    ['store/port.ts:3 docs/locks.md#releasing', 'store/port.ts:3 store/missing.ts'],
  )
  t.same(
    brokenMarkdownLinks(root, names).map(({ file, line, target }) => `${file}:${line} ${target}`),
    ['docs/index.md:1 gone.md', 'docs/index.md:1 locks.md#nowhere'],
  )
})
