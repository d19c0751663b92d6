/** `npm run start:gateway`: the gateway alone, forwarding to ENGINE_URL. */
import { start } from '../main.js'

await start('gateway')
