/** The console's entry point, bundled into console.js (scripts/build/console.mjs). */
import { render } from 'preact'
import { App } from './app.js'

const root = document.getElementById('app')
if (root) {
  root.textContent = ''
  render(<App />, root)
}
