/** The service version for health answers: package.json's version and its modification time. */
import { readFile, stat } from 'node:fs/promises'

export type VersionInfo = { version: string; modify: string } | { error: string }

/** Never throws: a failure to read is reported in the result (docs/reference/gateway.md#health). */
export async function readVersionInfo(packageJsonPath: string): Promise<VersionInfo> {
  try {
    const [content, stats] = await Promise.all([readFile(packageJsonPath, 'utf8'), stat(packageJsonPath)])
    const { version } = JSON.parse(content) as { version?: unknown }
    if (typeof version !== 'string') return { error: `${packageJsonPath} has no version` }
    return { version, modify: stats.mtime.toISOString() }
  } catch (error) {
    return { error: `Cannot read version information: ${(error as Error).message}` }
  }
}
