/** `npm run start:engine`: the engine alone (production shape, beside gateways on one MongoDB). */
import { start } from '../main.js'

await start('engine')
