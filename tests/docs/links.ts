/**
 * Test support for the docs: the relative links of a Markdown file and the anchors its headings
 * make, as GitHub renders them.
 */
import { existsSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'

/** Markdown outside fenced code blocks and inline code spans, where a link is text, not a link. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '')
}

/** The anchors GitHub gives the file's headings: lower case, punctuation dropped, blanks to `-`, repeats numbered. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  const withoutCode = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '')
  for (const match of withoutCode.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const text = match[1]!.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    const slug = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-')
    const count = seen.get(slug) ?? 0
    seen.set(slug, count + 1)
    anchors.add(count === 0 ? slug : `${slug}-${count}`)
  }
  return anchors
}

export interface BrokenLink {
  file: string
  target: string
  reason: string
}

/** The relative links (and `#anchors`) of `file` that do not resolve, named relative to `root`. */
export function brokenLinks(root: string, file: string): BrokenLink[] {
  const broken: BrokenLink[] = []
  const name = relative(root, file)
  for (const match of prose(readFileSync(file, 'utf8')).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const target = match[1]!
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue
    const [path, anchor] = target.split('#') as [string, string | undefined]
    const resolved = path === '' ? file : join(dirname(file), decodeURIComponent(path))
    if (!existsSync(resolved)) {
      broken.push({ file: name, target, reason: 'no such file' })
      continue
    }
    if (anchor === undefined || !resolved.endsWith('.md') || statSync(resolved).isDirectory()) continue
    if (!headingAnchors(readFileSync(resolved, 'utf8')).has(decodeURIComponent(anchor)))
      broken.push({ file: name, target, reason: `no heading makes #${anchor}` })
  }
  return broken
}
