import { spawn } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer, request, type Server } from 'node:http'
import { join } from 'node:path'
import t from 'tap'
import { type Teardown, tempDir } from '../../services/testing/harness.js'
import { listenOnUnixSocket, SocketPathInUse } from './unix-socket.js'

function get(socketPath: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const outgoing = request({ socketPath, path: '/hello', agent: false }, (response) => {
      let body = ''
      response.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')))
      response.on('end', () => resolve(body))
    })
    outgoing.on('error', reject)
    outgoing.end()
  })
}

async function httpServer(t: Teardown): Promise<Server> {
  const server = createServer((incoming, answer) => answer.end(`served ${incoming.url}`))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return server
}

t.test("the socket serves the HTTP server's requests; closing it stops accepting and removes the file", async (t) => {
  const path = join(tempDir(t), 'engine.sock')
  const server = await httpServer(t)
  const socket = await listenOnUnixSocket(server, path)
  t.equal(await get(path), 'served /hello')
  await socket.close()
  t.notOk(existsSync(path), 'the socket file is gone')
  await t.rejects(get(path), 'nothing accepts there any more')
})

t.test('a socket file left by a process that ended without closing it is replaced', async (t) => {
  const path = join(tempDir(t), 'engine.sock')
  // A process killed while listening leaves its socket file behind.
  const child = spawn(process.execPath, [
    '-e',
    `require('node:net').createServer().listen(${JSON.stringify(path)}, () => process.kill(process.pid, 'SIGKILL'))`,
  ])
  await new Promise((resolve) => child.once('exit', resolve))
  t.ok(existsSync(path), 'the stale socket file is there')
  const server = await httpServer(t)
  const socket = await listenOnUnixSocket(server, path)
  t.teardown(() => socket.close())
  t.equal(await get(path), 'served /hello')
})

t.test('a socket another process listens on, or a file that is no socket, is left alone', async (t) => {
  const dir = tempDir(t)
  const live = join(dir, 'live.sock')
  const first = await listenOnUnixSocket(await httpServer(t), live)
  t.teardown(() => first.close())
  await t.rejects(listenOnUnixSocket(await httpServer(t), live), SocketPathInUse)
  t.equal(await get(live), 'served /hello', 'the first listener still serves')
  const file = join(dir, 'notes.txt')
  writeFileSync(file, 'keep me')
  await t.rejects(listenOnUnixSocket(await httpServer(t), file), SocketPathInUse)
  t.equal(readFileSync(file, 'utf8'), 'keep me')
})
