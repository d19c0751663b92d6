/**
 * Test support for the repository's references: the text files a reader is sent through, the
 * mentions that point outside the repository (documents it does not hold, issue numbers), and the
 * repository paths written in docs and code comments that name nothing.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { brokenLinks, lineOf, unresolved, type BrokenLink } from './links.js'

/** Generated, vendored or binary files and test fixtures: nobody writes references there by hand. */
const notProse = /(^|\/)(generated|fixtures)\/|^package-lock\.json$|\.(png|jpe?g|gif|ico|tgz|woff2?)$/

/** The tracked (and new, not ignored) text files of the repository, relative to `root`. */
export function textFiles(root: string): string[] {
  const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8' })
  return [...new Set(listed.split('\0'))].filter((file) => file !== '' && !notProse.test(file) && existsSync(join(root, file))).sort()
}

/**
 * What points outside the repository: the team's former reference documents by name, section
 * signs, and issues (the word followed by a number, `#` and a number, or a quoted name). Built from
 * parts so that this file does not match itself.
 */
const outsideReference = new RegExp(
  [`\\b(?:${['SPEC', 'DESIGN', 'MODEL'].join('|')})\\.md\\b`, '\u00a7', `\\b[Ii]ssues?\\s+(?:#?\\d+|"[^"\\n]+")`].join('|'),
  'g',
)

export interface Finding {
  file: string
  line: number
  text: string
}

/** Every mention in `text` of something outside the repository. */
export function outsideReferences(file: string, text: string): Finding[] {
  return [...text.matchAll(outsideReference)].map((match) => ({ file, line: lineOf(text, match.index), text: match[0] }))
}

/** Files whose every line is a reader's text (docs, contracts, configuration), not code with comments. */
const prose = /\.(md|ya?ml|txt)$|(^|\/)(Makefile|Dockerfile|\.[\w-]*ignore)$/

/**
 * The comments of a code file, other text blanked (lines kept): `//` to the end of the line (not a
 * URL's `://`), and block comments `/* … *\/`, `#` comments of shell scripts.
 */
function comments(file: string, text: string): string {
  if (prose.test(file)) return text
  const hashComments = /\.(sh|bash)$/.test(file)
  return text
    .split('\n')
    .map((line) => {
      const trimmed = line.trimStart()
      if (/^(\/\*|\*)/.test(trimmed) || (hashComments && trimmed.startsWith('#'))) return line
      const slashes = line.search(/(?<!:)\/\/(?!\/)/)
      return slashes === -1 ? '' : ' '.repeat(slashes) + line.slice(slashes)
    })
    .join('\n')
}

/**
 * The repository paths a text names: `<top-level folder>/…`, optionally with `#anchor`. A path
 * preceded by another path segment (`dist/store/…`, `../store/…`) or part of a URL is not one.
 */
function pathPattern(topLevelFolders: string[]): RegExp {
  return new RegExp(`(?<![\\w./@$:-])(?:${topLevelFolders.join('|')})/[\\w./*{}-]*(?:#[\\w-]+)?`, 'g')
}

/** The top-level folders of the repository (not hidden ones). */
export function topLevelFolders(files: string[]): string[] {
  return [...new Set(files.filter((file) => file.includes('/')).map((file) => file.split('/')[0]!))].filter(
    (folder) => !folder.startsWith('.'),
  )
}

/**
 * Paths that are build output or local state, named in docs but absent from a fresh checkout. Each
 * is asked as a folder too (`sdk/dist/`): a pattern such as `dist/` matches folders only.
 */
function ignoredByGit(root: string, paths: string[]): Set<string> {
  if (paths.length === 0) return new Set()
  const asked = paths.flatMap((path) => [path, path.endsWith('/') ? path : `${path}/`])
  try {
    const ignored = execFileSync('git', ['check-ignore', '--no-index', '--stdin'], { cwd: root, input: asked.join('\n'), encoding: 'utf8' })
    return new Set(ignored.split('\n').flatMap((path) => (path === '' ? [] : [path, path.replace(/\/$/, '')])))
  } catch (error) {
    // Exit code 1: none of them is ignored.
    if ((error as { status?: number }).status === 1) return new Set()
    throw error
  }
}

/**
 * Every repository path (with its `#anchor`) written in `files`' docs and code comments that names
 * no file or folder, or an anchor its Markdown file does not have. A `.js` name stands for the
 * `.ts` file it is compiled from; a glob or placeholder (`services/engine/*`, `{a,b}`) is checked up
 * to where it starts.
 */
export function brokenPaths(root: string, files: string[]): BrokenLink[] {
  const pattern = pathPattern(topLevelFolders(files))
  const candidates: BrokenLink[] = []
  for (const file of files) {
    const text = comments(file, readFileSync(join(root, file), 'utf8'))
    for (const match of text.matchAll(pattern)) {
      const target = match[0].replace(/[.,:;)]+$/, '')
      const [written, anchor] = target.split('#') as [string, string | undefined]
      const path = written.replace(/[*{].*$/, '')
      const compiledFrom = path.replace(/\.js$/, '.ts')
      const resolved = existsSync(join(root, path)) || !existsSync(join(root, compiledFrom)) ? path : compiledFrom
      const reason = unresolved(join(root, resolved), anchor)
      if (reason !== undefined) candidates.push({ file, line: lineOf(text, match.index), target, reason })
    }
  }
  const ignored = ignoredByGit(
    root,
    candidates.filter((candidate) => candidate.reason === 'no such file').map((candidate) => candidate.target.split('#')[0]!),
  )
  return candidates.filter((candidate) => !ignored.has(candidate.target.split('#')[0]!))
}

/** The relative Markdown links of every Markdown file among `files` that do not resolve. */
export function brokenMarkdownLinks(root: string, files: string[]): BrokenLink[] {
  return files.filter((file) => file.endsWith('.md')).flatMap((file) => brokenLinks(root, join(root, file)))
}

/** One line per finding: `file:line: reference (reason)`. */
export function describe(findings: (Finding | BrokenLink)[]): string {
  return findings
    .map((finding) =>
      'target' in finding
        ? `${finding.file}:${finding.line}: ${finding.target} (${finding.reason})`
        : `${finding.file}:${finding.line}: ${finding.text}`,
    )
    .join('\n')
}
