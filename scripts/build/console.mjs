/**
 * Builds the console (console/, docs/console.md) into dist/console/: console.js (Preact, bpmn-js and
 * the SDK's fetch client, bundled by esbuild), console.css (the console's styles with bpmn-js's) and
 * index.html. The gateway serves that folder at /console (services/gateway/console/). Run by
 * `make build`, `npm run build` and the Dockerfile, after tsc (which empties nothing here).
 *
 *   node scripts/build/console.mjs [--out <folder>]
 */
import { copyFileSync, mkdirSync, rmSync } from 'node:fs'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { build } from 'esbuild'

const root = path.resolve(import.meta.dirname, '..', '..')
const { values } = parseArgs({ options: { out: { type: 'string', default: path.join(root, 'dist', 'console') } } })
const out = path.resolve(values.out)

rmSync(out, { recursive: true, force: true })
mkdirSync(out, { recursive: true })
/** @type {import('esbuild').BuildOptions} */
const common = {
  bundle: true,
  minify: true,
  sourcemap: 'linked',
  logLevel: 'warning',
  // The bundle reads nothing from the build's environment: no secret of the service can end up in it.
  define: { 'process.env.NODE_ENV': '"production"' },
}
await build({
  ...common,
  entryPoints: [path.join(root, 'console', 'src', 'main.tsx')],
  outfile: path.join(out, 'console.js'),
  format: 'esm',
  platform: 'browser',
  target: ['es2022'],
  tsconfig: path.join(root, 'console', 'tsconfig.json'),
})
await build({
  ...common,
  entryPoints: [path.join(root, 'console', 'styles.css')],
  outfile: path.join(out, 'console.css'),
  // Fonts and images bpmn-js's styles refer to are inlined: one file, served from the gateway's origin.
  loader: { '.woff': 'dataurl', '.woff2': 'dataurl', '.ttf': 'dataurl', '.eot': 'dataurl', '.svg': 'dataurl', '.png': 'dataurl' },
})
copyFileSync(path.join(root, 'console', 'index.html'), path.join(out, 'index.html'))
