/**
 * Test support for the docs: the relative links of a Markdown file, the anchors a Markdown file
 * offers (its headings, as GitHub renders them, and explicit `<a id="…">` anchors), and whether a
 * `path#anchor` reference resolves.
 */
import GithubSlugger from 'github-slugger'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'

const fencedBlock = /^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm

const blank = (code: string): string => code.replace(/[^\n]/g, ' ')

/**
 * Markdown with fenced code blocks and inline code spans blanked (where a link is text, not a
 * link); blanked rather than removed, so that an offset still gives the right line.
 */
function prose(markdown: string): string {
  return markdown.replace(fencedBlock, blank).replace(/`[^`\n]*`/g, blank)
}

/**
 * The anchors GitHub gives the file's headings (github-slugger: lower case, punctuation dropped,
 * blanks to `-`, repeats numbered), and the explicit anchors `<a id="…">` / `<a name="…">`.
 */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>()
  const slugger = new GithubSlugger()
  const withoutCode = markdown.replace(fencedBlock, '')
  for (const match of withoutCode.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    // GitHub slugs the rendered text: a link's text stays, inline code loses its backticks.
    anchors.add(slugger.slug(match[1]!.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')))
  }
  for (const match of withoutCode.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(match[1]!)
  return anchors
}

/** Why `path` (a file or folder, absolute) with an optional `#anchor` does not resolve, or undefined when it does. */
export function unresolved(path: string, anchor: string | undefined): string | undefined {
  if (!existsSync(path)) return 'no such file'
  if (anchor === undefined || !path.endsWith('.md') || statSync(path).isDirectory()) return undefined
  if (!headingAnchors(readFileSync(path, 'utf8')).has(anchor)) return `no heading or <a id> makes #${anchor}`
  return undefined
}

export interface BrokenLink {
  file: string
  line: number
  target: string
  reason: string
}

/** The 1-based line of `offset` in `text`. */
export function lineOf(text: string, offset: number): number {
  let line = 1
  for (let index = text.indexOf('\n'); index !== -1 && index < offset; index = text.indexOf('\n', index + 1)) line++
  return line
}

/** The relative links (and `#anchors`) of `file` that do not resolve, named relative to `root`. */
export function brokenLinks(root: string, file: string): BrokenLink[] {
  const broken: BrokenLink[] = []
  const name = relative(root, file)
  const text = prose(readFileSync(file, 'utf8'))
  for (const match of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const target = match[1]!
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue
    const [path, anchor] = target.split('#') as [string, string | undefined]
    const resolved = path === '' ? file : join(dirname(file), decodeURIComponent(path))
    const reason = unresolved(resolved, anchor === undefined ? undefined : decodeURIComponent(anchor))
    if (reason !== undefined) broken.push({ file: name, line: lineOf(text, match.index), target, reason })
  }
  return broken
}
