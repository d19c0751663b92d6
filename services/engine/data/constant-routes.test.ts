import t from 'tap'
import { HR, startHrEngine } from '../../testing/workflow.js'

t.test("getConstantValue answers the value of <appId>:<name> of the request's app, and nothing for any other", async (t) => {
  const engine = await startHrEngine(t)
  const ask = (body: Record<string, unknown>, user: string = engine.users.employee.userId) =>
    engine.call('getConstantValue', 'POST', '/getConstantValue', { user, body: { ...HR, processInstanceId: 'any', ...body } })
  t.same((await ask({ constantId: 'hr:vatRate' })).body, { result: '0.2' })
  t.same((await ask({ constantId: 'hr:missing' })).body, {}, 'absent when not found')
  t.same((await ask({ appId: 'sales', constantId: 'hr:vatRate' })).body, {}, "absent when the id names another app than the request's")
  t.same((await ask({ constantId: 'vatRate' })).body, {}, 'a bare name is not a constant id')
  t.same((await ask({ constantId: 'hr:vatRate' }, engine.users.stranger.userId)).body, {}, 'absent for a user of another app')
  t.match(
    await ask({ processInstanceId: undefined, constantId: 'hr:vatRate' }),
    { status: 400, body: { code: 'wm4000', parameters: { field: 'body.processInstanceId' } } },
    'processInstanceId is validated',
  )
})
