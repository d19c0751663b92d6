import t from 'tap'
import { startAllInOne } from '../../services/testing/all-in-one.js'
import { hs256Tokens, runLeaveRequest } from './leave-request.js'

/** The all-in-one's environment: JWT authentication, and the admin token the example creates its users with. */
const ENV = { AUTH_MODE: 'jwt', JWT_SECRET: 'example-jwt-secret-0123456789abcdef0123', ADMIN_TOKEN: 'example-admin-token-0123456789' }

t.test(
  'the leave-request example runs end to end through the SDK against a live all-in-one in AUTH_MODE=jwt, and removes the users it created',
  { timeout: 60_000 },
  async (t) => {
    const { gatewayUrl } = await startAllInOne(t, ENV)
    const steps: string[] = []
    const outcome = await runLeaveRequest({
      baseUrl: gatewayUrl,
      adminToken: ENV.ADMIN_TOKEN,
      tokenFor: hs256Tokens(ENV.JWT_SECRET),
      removeUsers: true,
      log: (line) => steps.push(line),
    })
    t.same(outcome.finalStatus, { tasks: [], processStatus: 'completed' }, 'the approved request finished the process')
    t.match(
      outcome.dataInstance,
      { days: 3, reason: 'Family visit', booked: true, bookedBy: outcome.manager.userId, payrollUpdated: true, teamInformed: true },
      'the flow functions ran',
    )
    t.match(outcome.businessKey, /^LR-/)
    const users = await fetch(`${gatewayUrl}/user/listWorkflowUsers?appId=hr&organizationId=acme`, {
      headers: { authorization: `Bearer ${ENV.ADMIN_TOKEN}` },
    })
    t.same(((await users.json()) as { data: unknown[] }).data, [], 'the example removed the users it created')
    t.match(steps, [
      /^created users/,
      /^deployed hr-constants/,
      /^deployed hr-lib/,
      /^deployed leave-bookings/,
      /^deployed leave-form/,
      /^deployed leave-request/,
      /^started LR-/,
      /^submitted; next: Approve leave/,
      /^approved by/,
      /^process status: completed/,
      /^removed users/,
    ])
  },
)
