/** `npm start` / `make run`: engine + gateway + one embedded (or MongoDB) store in one process. */
import { start } from './main.js'

await start(['engine', 'gateway'])
