// @ts-check
/** A timed request, as the benches that measure latency themselves send it. */

/**
 * POSTs JSON as `user` and reads the whole answer; `ms` runs from sending to the last byte.
 * @param {import('undici').Pool} pool @param {string} path @param {string} user @param {object} body
 * @returns {Promise<{ status: number, text: string, ms: number }>}
 */
export async function timedPost(pool, path, user, body) {
  const started = performance.now()
  const response = await pool.request({
    method: 'POST',
    path,
    headers: { 'content-type': 'application/json', user },
    body: JSON.stringify(body),
  })
  const text = await response.body.text()
  return { status: response.statusCode, text, ms: performance.now() - started }
}

/**
 * A GET as `user`, timed from the request to the whole answer.
 * @param {import('undici').Pool} pool @param {string} path @param {string} user
 * @returns {Promise<{ status: number, text: string, ms: number }>}
 */
export async function timedGet(pool, path, user) {
  const started = performance.now()
  const response = await pool.request({ method: 'GET', path, headers: { user } })
  const text = await response.body.text()
  return { status: response.statusCode, text, ms: performance.now() - started }
}
