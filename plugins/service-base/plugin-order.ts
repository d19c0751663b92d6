/**
 * The order an app registers its plugins in, worked out from what each one declares with
 * fastify-plugin (`fp(plugin, { name, dependencies })`) rather than from where it stands in the
 * app's list: a plugin is registered after every listed plugin it names, and otherwise in the order
 * the app lists them (stable), so a list already in dependency order is registered as written.
 * fastify-plugin checks the same declarations again as each plugin is registered.
 */
import type { FastifyInstance, FastifyPluginAsync, FastifyPluginOptions } from 'fastify'

/** A plugin's name and the plugins it needs registered before it. */
export interface PluginDeclaration {
  readonly name: string
  readonly dependencies: readonly string[]
}

/** A plugin an app lists, with the options it is registered with. */
export interface ListedPlugin extends PluginDeclaration {
  register(app: FastifyInstance): Promise<void>
}

/** The app's list cannot be ordered: a dependency nobody provides, a name listed twice, or a cycle. */
export class PluginOrderError extends Error {
  override readonly name = 'PluginOrderError'
}

/** Where fastify-plugin keeps the options it was given, name and dependencies included. */
const PLUGIN_META = Symbol.for('plugin-meta')

/** Names fastify-plugin makes up for a plugin given none (`<function>-auto-<n>`): no other plugin can name them. */
const MADE_UP_NAME = /-auto-\d+$/

function isStringList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string')
}

/** The name and dependencies a plugin declared with fastify-plugin; a plugin without a name of its own is refused. */
export function declarationOf(plugin: object, description = 'a plugin'): PluginDeclaration {
  const meta: unknown = Reflect.get(plugin, PLUGIN_META)
  const declared = typeof meta === 'object' && meta !== null ? meta : {}
  const name: unknown = Reflect.get(declared, 'name')
  if (typeof name !== 'string' || MADE_UP_NAME.test(name))
    throw new PluginOrderError(`${description} declares no name: wrap it in fastify-plugin, fp(plugin, { name, dependencies })`)
  const dependencies: unknown = Reflect.get(declared, 'dependencies') ?? []
  if (!isStringList(dependencies)) throw new PluginOrderError(`plugin '${name}' declares dependencies that are not a list of names`)
  return { name, dependencies }
}

/** A plugin of the app's list, registered with `options` (none when not given). */
export function listed(plugin: FastifyPluginAsync): ListedPlugin
export function listed<Options extends FastifyPluginOptions>(plugin: FastifyPluginAsync<Options>, options: Options): ListedPlugin
export function listed<Options extends FastifyPluginOptions>(
  ...entry: [FastifyPluginAsync] | [FastifyPluginAsync<Options>, Options]
): ListedPlugin {
  return {
    ...declarationOf(entry[0], `the plugin function ${entry[0].name || '(anonymous)'}`),
    async register(app) {
      await (entry.length === 1 ? app.register(entry[0]) : app.register(entry[0], entry[1]))
    },
  }
}

/** One cycle among plugins of which none can go first: each needs the next, the last the first. */
function cycleAmong(waiting: readonly PluginDeclaration[]): string[] {
  const byName = new Map(waiting.map((plugin) => [plugin.name, plugin]))
  const path: string[] = []
  let current: PluginDeclaration | undefined = waiting[0]
  while (current !== undefined && !path.includes(current.name)) {
    path.push(current.name)
    const next: string | undefined = current.dependencies.find((dependency) => byName.has(dependency))
    current = next === undefined ? undefined : byName.get(next)
  }
  return current === undefined ? path : [...path.slice(path.indexOf(current.name)), current.name]
}

/**
 * The plugins in an order where each comes after the listed plugins it depends on, ties kept in
 * the list's order. A dependency that is not listed must be `registered` already (for example by
 * service-base); otherwise, or when two plugins share a name or need each other in a cycle, it
 * throws a PluginOrderError naming them.
 */
export function orderByDependencies<Plugin extends PluginDeclaration>(
  plugins: readonly Plugin[],
  registered: (name: string) => boolean = () => false,
): Plugin[] {
  const listedNames = new Set<string>()
  for (const plugin of plugins) {
    if (listedNames.has(plugin.name)) throw new PluginOrderError(`plugin '${plugin.name}' is listed twice`)
    listedNames.add(plugin.name)
  }
  for (const plugin of plugins) {
    const missing = plugin.dependencies.find((dependency) => !listedNames.has(dependency) && !registered(dependency))
    if (missing !== undefined)
      throw new PluginOrderError(`plugin '${plugin.name}' depends on '${missing}', which is neither listed nor registered`)
  }
  const placed = new Set<string>()
  const ordered: Plugin[] = []
  let waiting = [...plugins]
  while (waiting.length > 0) {
    const next = waiting.find((plugin) => plugin.dependencies.every((dependency) => placed.has(dependency) || !listedNames.has(dependency)))
    if (next === undefined) throw new PluginOrderError(`plugins depend on each other in a cycle: ${cycleAmong(waiting).join(' → ')}`)
    ordered.push(next)
    placed.add(next.name)
    waiting = waiting.filter((plugin) => plugin !== next)
  }
  return ordered
}

/** Registers the app's plugins in dependency order, after those already registered (service-base's). */
export async function registerInDependencyOrder(app: FastifyInstance, plugins: readonly ListedPlugin[]): Promise<void> {
  for (const plugin of orderByDependencies(plugins, (name) => app.hasPlugin(name))) await plugin.register(app)
}
