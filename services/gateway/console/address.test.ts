import t from 'tap'
import { consoleAddress } from './address.js'

t.test('/console/ is read as /console, its query string kept; every other address is left as it is', async (t) => {
  t.equal(consoleAddress('/console/'), '/console')
  t.equal(consoleAddress('/console/?organizationId=acme&appId=hr'), '/console?organizationId=acme&appId=hr')
  for (const address of ['/console', '/console?appId=hr', '/console/console.js', '/consoles/', '/console//', '/query/instances'])
    t.equal(consoleAddress(address), address, address)
  t.equal(consoleAddress(undefined), '/')
})
