// @ts-check
/**
 * nginx as a reverse proxy in front of the engine: the figure of a proxy written in C, printed beside
 * the gateway's for information. Used only when `nginx` is on PATH; nothing installs it.
 */
import { existsSync, writeFileSync } from 'node:fs'
import { delimiter, join } from 'node:path'
import { startProcess } from './process.mjs'

/** The nginx binary on PATH, or undefined. */
export function nginxOnPath() {
  return (process.env.PATH ?? '')
    .split(delimiter)
    .filter(Boolean)
    .map((dir) => join(dir, 'nginx'))
    .find((candidate) => existsSync(candidate))
}

/**
 * One nginx process (no master, one worker's work in the process started, so its CPU time is the
 * proxy's) listening on `port` and forwarding everything to `upstream` over kept-alive connections,
 * as the gateway does. Its configuration, logs and temporary files stay in `dir`.
 * @param {{ binary: string, dir: string, port: number, upstream: string }} options the upstream as nginx's `server` names it
 * (`host:port`, `unix:/path`)
 */
export async function startNginx({ binary, dir, port, upstream }) {
  const temp = (/** @type {string} */ name) => join(dir, name)
  const config = `
master_process off;
daemon off;
worker_processes 1;
pid ${temp('nginx.pid')};
error_log stderr warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${temp('client-body')};
  proxy_temp_path ${temp('proxy')};
  fastcgi_temp_path ${temp('fastcgi')};
  uwsgi_temp_path ${temp('uwsgi')};
  scgi_temp_path ${temp('scgi')};
  upstream engine {
    server ${upstream};
    keepalive 64;
  }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://engine;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }
  }
}
`
  const file = temp('nginx.conf')
  writeFileSync(file, config)
  const running = await startProcess({
    command: binary,
    args: ['-p', dir, '-c', file, '-e', 'stderr'],
    ready: [`http://127.0.0.1:${port}/liveness`],
  })
  return { ...running, origin: `http://127.0.0.1:${port}` }
}
