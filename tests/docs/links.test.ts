import t from 'tap'
import { headingAnchors } from './links.js'

// Every relative link and path of every Markdown file is checked by references.test.ts.

t.test('anchors are made as GitHub makes them, and explicit <a id> anchors count', async (t) => {
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
      '| <a id="wm3019"></a>`wm3019` | 400 |',
    ].join('\n'),
  )
  t.same([...anchors], ['running-in-production', 'readiness-get-readiness', 'the-api-by-task', 'notes', 'notes-1', 'wm3019'])
})
