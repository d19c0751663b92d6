/** Reads samples out of a Prometheus text exposition, for tests. */

export interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g

export function parseExposition(text: string): Sample[] {
  const samples: Sample[] = []
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const match = SAMPLE.exec(line)
    if (!match) throw new Error(`not a sample line: ${line}`)
    const labels: Record<string, string> = {}
    for (const label of (match[2] ?? '').matchAll(LABEL)) labels[label[1] as string] = label[2] as string
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) })
  }
  return samples
}

/** The value of the one sample with this name whose labels include `labels`; undefined when none. */
export function sampleValue(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const found = samples.filter(
    (sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  )
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`)
  return found[0]?.value
}

/** The label values a metric has been seen with, per label name. */
export function labelNames(samples: readonly Sample[], name: string): Set<string> {
  return new Set(samples.filter((sample) => sample.name === name).flatMap((sample) => Object.keys(sample.labels)))
}

export async function scrape(url: string, headers: Record<string, string> = {}): Promise<Sample[]> {
  const response = await fetch(`${url}/metrics`, { headers })
  if (response.status !== 200) throw new Error(`GET ${url}/metrics answered ${response.status}: ${await response.text()}`)
  return parseExposition(await response.text())
}
