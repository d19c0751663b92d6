/**
 * `node --import <this file>`: every module the process's main thread imports is appended, one URL
 * per line, to the file RECORD_IMPORTS_FILE names (services/loaded-modules.test.ts reads it). The
 * hooks run on Node.js's loader thread (record-imports-hooks.ts).
 */
import { register } from 'node:module'

register('./record-imports-hooks.js', import.meta.url)
