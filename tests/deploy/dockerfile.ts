/**
 * The Dockerfile as the image test reads it: its stages and their steps, parsed with dockerfile-ast.
 * Only what the image test knows how to carry out is accepted; any other instruction, flag or form
 * stops the test with the line and the reason, so the test cannot drift silently from the file.
 */
import { Copy, DockerfileParser, Env, From, type Instruction, JSONInstruction } from 'dockerfile-ast'

export type Step =
  | { kind: 'workdir'; line: number; text: string; path: string }
  | { kind: 'env'; line: number; text: string; values: Record<string, string> }
  | {
      kind: 'copy'
      line: number
      text: string
      from: string | undefined
      chown: string | undefined
      sources: string[]
      destination: string
    }
  | { kind: 'run'; line: number; text: string; command: string }
  | { kind: 'user'; line: number; text: string; user: string }
  | { kind: 'expose'; line: number; text: string; ports: number[] }
  | { kind: 'cmd'; line: number; text: string; argv: string[] }

export interface Stage {
  /** The `AS` name, when the stage has one. */
  name: string | undefined
  /** The base image, e.g. `node:20-bookworm-slim`. */
  image: string
  line: number
  steps: Step[]
}

export class UnsupportedInstruction extends Error {
  constructor(line: number, text: string, reason: string) {
    super(`Dockerfile line ${line}: \`${text}\`: ${reason}; teach tests/deploy/ what Docker does with it, or write it another way`)
  }
}

export function parseDockerfile(content: string): Stage[] {
  const stages: Stage[] = []
  for (const instruction of DockerfileParser.parse(content).getInstructions()) {
    const line = instruction.getRange().start.line + 1
    const text = instruction.toString()
    const unsupported = (reason: string) => new UnsupportedInstruction(line, text, reason)
    if (instruction.getVariables().length > 0) throw unsupported('variables are not expanded by the image test')
    if (instruction instanceof From) {
      const args = instruction.getArguments().map((argument) => argument.getValue())
      if (instruction.getFlags().length > 0 || !(args.length === 1 || (args.length === 3 && args[1]!.toUpperCase() === 'AS')))
        throw unsupported('FROM takes an image and an optional `AS name` only')
      stages.push({ name: args[2], image: args[0]!, line, steps: [] })
      continue
    }
    const stage = stages.at(-1)
    if (!stage) throw unsupported('an instruction before the first FROM')
    stage.steps.push(parseStep(instruction, line, text, unsupported))
  }
  return stages
}

function parseStep(instruction: Instruction, line: number, text: string, unsupported: (reason: string) => Error): Step {
  const args = instruction.getArguments().map((argument) => argument.getValue())
  switch (instruction.getKeyword()) {
    case 'WORKDIR':
      if (args.length !== 1) throw unsupported('WORKDIR takes one path')
      return { kind: 'workdir', line, text, path: args[0]! }
    case 'ENV':
      return {
        kind: 'env',
        line,
        text,
        values: Object.fromEntries((instruction as Env).getProperties().map((property) => [property.getName(), property.getValue() ?? ''])),
      }
    case 'COPY':
      return parseCopy(instruction as Copy, line, text, unsupported)
    case 'RUN': {
      if (instruction instanceof JSONInstruction && instruction.getJSONStrings().length > 0) throw unsupported('RUN in exec form')
      if (text.split(/\s+/)[1]?.startsWith('--')) throw unsupported('RUN flags')
      if (/<<-?\s*['"]?\w+/.test(text)) throw unsupported('here-documents')
      return { kind: 'run', line, text, command: instruction.getArgumentsContent()?.replace(/\s+/g, ' ').trim() ?? '' }
    }
    case 'USER':
      if (args.length !== 1) throw unsupported('USER takes one name')
      return { kind: 'user', line, text, user: args[0]! }
    case 'EXPOSE':
      if (!args.every((port) => /^\d+$/.test(port))) throw unsupported('EXPOSE takes TCP port numbers')
      return { kind: 'expose', line, text, ports: args.map(Number) }
    case 'CMD': {
      const argv = (instruction as JSONInstruction).getJSONStrings().map((argument) => argument.getJSONValue())
      if (argv.length === 0) throw unsupported('CMD in shell form (the exec form, a JSON array, receives signals)')
      return { kind: 'cmd', line, text, argv }
    }
    default:
      throw unsupported(`${instruction.getKeyword()} is not an instruction the image test carries out`)
  }
}

function parseCopy(copy: Copy, line: number, text: string, unsupported: (reason: string) => Error): Step {
  const flags = new Map(copy.getFlags().map((flag) => [flag.getName(), flag.getValue() ?? '']))
  const unknown = [...flags.keys()].filter((name) => name !== 'from' && name !== 'chown')
  if (unknown.length > 0) throw unsupported(`COPY --${unknown.join(', --')}`)
  if (copy.getHeredocs().length > 0) throw unsupported('here-documents')
  const paths =
    copy.getJSONStrings().length > 0
      ? copy.getJSONStrings().map((argument) => argument.getJSONValue())
      : copy.getArguments().map((argument) => argument.getValue())
  if (paths.length < 2) throw unsupported('COPY needs a source and a destination')
  if (paths.some((path) => /[*?[]/.test(path))) throw unsupported('wildcards in COPY paths')
  return {
    kind: 'copy',
    line,
    text,
    from: flags.get('from'),
    chown: flags.get('chown'),
    sources: paths.slice(0, -1),
    destination: paths.at(-1)!,
  }
}
