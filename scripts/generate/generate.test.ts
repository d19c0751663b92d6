import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
import { repoRoot } from '../../lib/server/paths.js'

const run = promisify(execFile)

t.test('the generated code matches the OpenAPI documents (no drift)', async (t) => {
  const result = await run(process.execPath, [join(repoRoot, 'scripts/generate/index.mjs'), '--check'], { cwd: repoRoot }).catch(
    (error: { code: number; stderr: string }) => error,
  )
  t.equal('code' in result ? result.code : 0, 0, 'stderr' in result ? result.stderr : 'up to date')
})

t.test('the OpenAPI documents, hand-written and served, lint clean', async (t) => {
  const documents = ['engine', 'gateway'].flatMap((service) => [`openapi/${service}.yaml`, `openapi/generated/${service}.openapi.json`])
  const result = await run(join(repoRoot, 'node_modules/.bin/redocly'), ['lint', '--format=stylish', ...documents], {
    cwd: repoRoot,
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
  }).catch((error: { code: number; stdout: string; stderr: string }) => error)
  const output = `${result.stdout}\n${result.stderr}`
  t.equal('code' in result ? result.code : 0, 0, output)
  t.notMatch(output, /You have \d+ warnings?/, 'no warnings either')
})
