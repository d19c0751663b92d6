import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { repoRoot } from '../../lib/server/paths.js'
import { brokenLinks, headingAnchors } from './links.js'

const docsDir = join(repoRoot, 'docs')
const markdownFiles = [
  join(repoRoot, 'README.md'),
  ...readdirSync(docsDir)
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => join(docsDir, name)),
]

t.test('every relative link and #anchor in README.md and docs/*.md resolves', async (t) => {
  t.same(
    markdownFiles.flatMap((file) => brokenLinks(repoRoot, file)),
    [],
  )
})

t.test('anchors are made as GitHub makes them', async (t) => {
  const anchors = headingAnchors(
    [
      '# Running in production',
      '## Readiness: `GET /readiness`',
      '## The API, by task',
      '## Notes',
      '## Notes',
      '```',
      '# not a heading',
      '```',
    ].join('\n'),
  )
  t.same([...anchors], ['running-in-production', 'readiness-get-readiness', 'the-api-by-task', 'notes', 'notes-1'])
})
