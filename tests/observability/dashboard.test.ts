import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { repoRoot } from '../../lib/server/paths.js'
import { startService } from '../../services/testing/harness.js'

interface Panel {
  title: string
  type: string
  targets?: Array<{ expr: string }>
}

/** The metric families the service declares (`# TYPE` lines), with or without samples yet. */
async function declaredFamilies(url: string): Promise<Set<string>> {
  const text = await (await fetch(`${url}/metrics`)).text()
  return new Set([...text.matchAll(/^# TYPE (\S+) \S+$/gm)].map((match) => match[1] as string))
}

t.test('every metric the Grafana dashboard queries is one the gateway or the engine exposes', async (t) => {
  const dashboard = JSON.parse(readFileSync(join(repoRoot, 'deploy/grafana/workflow-dashboard.json'), 'utf8')) as { panels: Panel[] }
  const engine = await startService(t, 'engine')
  const gateway = await startService(t, 'gateway', { config: { engineUrl: engine.url } })
  const exposed = new Set([...(await declaredFamilies(engine.url)), ...(await declaredFamilies(gateway.url))])
  const queried = new Set(
    dashboard.panels
      .flatMap((panel) => panel.targets ?? [])
      .flatMap((target) =>
        [...target.expr.matchAll(/\b((?:workflow|http|process|nodejs)_[a-z_]+)\{/g)].map((match) =>
          (match[1] as string).replace(/_(bucket|count|sum)$/, ''),
        ),
      ),
  )
  t.ok(queried.size >= 12, `the dashboard queries ${queried.size} metrics`)
  for (const name of queried) t.ok(exposed.has(name), `${name} is exposed`)
  const titles = dashboard.panels.filter((panel) => panel.type === 'row').map((panel) => panel.title)
  t.same(titles, ['Throughput', 'Latency', 'Open tasks', 'Failures', 'Batch jobs'])
})
