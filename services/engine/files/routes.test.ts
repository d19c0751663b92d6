import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import type { Config } from '../../../lib/config/config.js'
import { openStore } from '../../../store/open.js'
import { ContractChecker } from '../../testing/contract.js'
import { startService, tempDir } from '../../testing/harness.js'
import { storedActivityTypes, storedInstance } from '../../testing/instance-store.js'
import { deployExample } from '../../testing/models.js'
import { type ContractTest, createHrUsers, deployHrApp, HR, startLeaveRequest, workflowClient, taskIds } from '../../testing/workflow.js'
import { contentDisposition } from './routes.js'

const contract = new ContractChecker('engine')

/** An HR engine over a store whose data dir the test can look into (the stored file bytes). */
async function fileEngine(t: ContractTest, config: Partial<Config> = {}, edit?: (body: Record<string, unknown>) => void) {
  const dataDir = tempDir(t, 'workflow-files-')
  const store = await openStore({ dataDir })
  t.teardown(() => store.close())
  await deployHrApp(store)
  if (edit) await deployExample(store, 'leave-request', { ...HR, edit })
  const users = await createHrUsers(store)
  const { url } = await startService(t, 'engine', { store, config })
  const client = workflowClient(t, url)
  const session = (await startLeaveRequest(client, users.employee)).body
  const ids = taskIds(session)
  const fields = { ...ids, taskDefinitionKey: 'request', label: "Doctor's note", fileName: 'note.pdf' }
  /** Stored files (bytes and their sidecars). */
  const storedFiles = () => readdirSync(join(dataDir, 'files')).filter((name) => !name.endsWith('.json'))
  return { store, users, client, url, fields, storedFiles, processInstanceId: ids.processInstanceId }
}

async function upload(t: ContractTest, url: string, user: string, parts: Array<['fields', string] | ['fileBody', Blob, string]>) {
  const form = new FormData()
  for (const part of parts) {
    if (part[0] === 'fields') form.append('fields', part[1])
    else form.append('fileBody', part[1], part[2])
  }
  const response = await fetch(`${url}/file/upload`, { method: 'POST', headers: { user }, body: form })
  const body: unknown = await response.json()
  t.same(contract.errors('uploadFile', response.status, body), [], `uploadFile ${response.status} answer matches the contract`)
  return { status: response.status, body: body as Record<string, unknown> }
}

t.test("upload, download and delete through the model's file functions, with files list and activities", async (t) => {
  const { store, url, users, fields, storedFiles, processInstanceId } = await fileEngine(t)
  const bytes = Buffer.from('%PDF-1.7 pretend this is a scan \u00e9')
  const uploaded = await upload(t, url, users.employee.userId, [
    ['fields', JSON.stringify(fields)],
    ['fileBody', new Blob([bytes], { type: 'application/pdf' }), 'note.pdf'],
  ])
  t.equal(uploaded.status, 200)
  t.match(uploaded.body, {
    label: "Doctor's note",
    fileName: 'note.pdf',
    fileType: 'application/pdf',
    size: bytes.length,
    taskId: fields.taskId,
    userId: users.employee.userId,
  })
  const storageHandle = uploaded.body.storageHandle as string
  t.equal(storedFiles().length, 1, 'the bytes are stored')
  t.match((await storedInstance(store, processInstanceId)).processInstance.files, [{ id: uploaded.body.id, storageHandle }])
  t.equal((await storedActivityTypes(store, processInstanceId)).at(-1), 'fileUpload')

  const operation = { ...HR, ...fields, storageHandle }
  const download = await fetch(`${url}/file/download`, {
    method: 'POST',
    headers: { user: users.employee.userId, 'content-type': 'application/json' },
    body: JSON.stringify(operation),
  })
  t.equal(download.status, 200)
  t.same(Buffer.from(await download.arrayBuffer()), bytes, 'the raw bytes')
  t.equal(download.headers.get('content-type'), 'application/pdf')
  t.equal(download.headers.get('content-disposition'), contentDisposition('note.pdf'))
  t.equal((await storedActivityTypes(store, processInstanceId)).at(-1), 'fileDownload')

  const deleted = await fetch(`${url}/file/delete`, {
    method: 'POST',
    headers: { user: users.employee.userId, 'content-type': 'application/json' },
    body: JSON.stringify(operation),
  })
  t.same(await deleted.json(), { isSuccess: true })
  t.same((await storedInstance(store, processInstanceId)).processInstance.files, [])
  t.equal((await storedActivityTypes(store, processInstanceId)).at(-1), 'fileDelete')
  t.same(storedFiles(), [], 'the bytes are removed')
  const gone = await fetch(`${url}/file/download`, {
    method: 'POST',
    headers: { user: users.employee.userId, 'content-type': 'application/json' },
    body: JSON.stringify(operation),
  })
  t.equal(gone.status, 404)
  t.match(await gone.json(), { code: 'wm3072' })
})

t.test('a file the upload function rejects, or one over MAX_UPLOAD_BYTES, leaves no bytes and no record', async (t) => {
  const { store, url, users, fields, storedFiles, processInstanceId } = await fileEngine(t, { maxUploadBytes: 1024 })
  const version = (await storedInstance(store, processInstanceId)).version
  const rejected = await upload(t, url, users.employee.userId, [
    ['fields', JSON.stringify({ ...fields, fileName: 'setup.exe' })],
    ['fileBody', new Blob([Buffer.alloc(10)]), 'setup.exe'],
  ])
  t.match(rejected, { status: 400, body: { code: 'wm3053', message: 'Executable files are not accepted' } })
  const shouting = await upload(t, url, users.employee.userId, [
    ['fields', JSON.stringify({ ...fields, fileName: 'EVIL.EXE' })],
    ['fileBody', new Blob([Buffer.alloc(10)]), 'EVIL.EXE'],
  ])
  t.match(shouting, { status: 400, body: { code: 'wm3053', message: 'Executable files are not accepted' } }, 'the extension in any case')
  const tooLarge = await upload(t, url, users.employee.userId, [
    ['fields', JSON.stringify(fields)],
    ['fileBody', new Blob([Buffer.alloc(1025)]), 'note.pdf'],
  ])
  t.match(tooLarge, { status: 413, body: { code: 'wm3073' } })
  t.same(storedFiles(), [], 'no bytes kept')
  t.equal((await storedInstance(store, processInstanceId)).version, version, 'no context change')
  const exact = await upload(t, url, users.employee.userId, [
    ['fields', JSON.stringify(fields)],
    ['fileBody', new Blob([Buffer.alloc(1024)]), 'note.pdf'],
  ])
  t.equal(exact.status, 200, 'exactly MAX_UPLOAD_BYTES is accepted')
})

t.test('uploads: bad fields, missing ids (500, as documented), parts out of order and another tenant', async (t) => {
  const { store, url, users, fields, storedFiles, processInstanceId } = await fileEngine(t)
  const version = (await storedInstance(store, processInstanceId)).version
  const file: ['fileBody', Blob, string] = ['fileBody', new Blob([Buffer.from('x')]), 'note.pdf']
  t.match(await upload(t, url, users.employee.userId, [['fields', '{not json'], file]), { status: 400, body: { code: 'wm4000' } })
  t.match(await upload(t, url, users.employee.userId, [['fields', JSON.stringify({ ...fields, label: undefined })], file]), {
    status: 400,
    body: { code: 'wm4000', parameters: { field: 'fields.label' } },
  })
  t.match(await upload(t, url, users.employee.userId, [['fields', JSON.stringify({ ...fields, processInstanceId: undefined })], file]), {
    status: 500,
    body: { code: 'wm3071' },
  })
  t.match(await upload(t, url, users.employee.userId, [['fields', JSON.stringify({ ...fields, processId: undefined })], file]), {
    status: 500,
    body: { code: 'wm3071' },
  })
  t.match(await upload(t, url, users.employee.userId, [file, ['fields', JSON.stringify(fields)]]), {
    status: 400,
    body: { code: 'wm4000', parameters: { field: 'fields' } },
  })
  t.match(await upload(t, url, users.employee.userId, [['fields', JSON.stringify(fields)]]), {
    status: 400,
    body: { code: 'wm4000', parameters: { field: 'fileBody' } },
  })
  t.match(await upload(t, url, users.employee.userId, [['fields', JSON.stringify({ ...fields, taskId: 'nope' })], file]), {
    status: 404,
    body: { code: 'wm3005' },
  })
  t.match(await upload(t, url, users.stranger.userId, [['fields', JSON.stringify(fields)], file]), {
    status: 404,
    body: { code: 'wm3001' },
  })
  t.match(await upload(t, url, users.colleague.userId, [['fields', JSON.stringify({ ...fields, processInstanceId: 'missing' })], file]), {
    status: 404,
    body: { code: 'wm3001' },
  })
  t.same(storedFiles(), [])
  t.equal((await storedInstance(store, processInstanceId)).version, version)
  const json = await fetch(`${url}/note/add`, { method: 'POST', headers: { user: users.employee.userId }, body: new FormData() })
  t.equal(json.status, 415, 'other routes still refuse multipart bodies')
})

t.test(
  'file fields as documented: body of any JSON type; download and delete need only ' +
    'the ids and storageHandle; missing ids are 500 whatever else is missing',
  async (t) => {
    const { store, url, users, fields, storedFiles, processInstanceId } = await fileEngine(t)
    const user = users.employee.userId
    const file = (): ['fileBody', Blob, string] => ['fileBody', new Blob([Buffer.from('x')]), 'note.pdf']
    const handles: string[] = []
    for (const body of ['', 0, [1, 'two'], null, false, { nested: { deep: true } }]) {
      const uploaded = await upload(t, url, user, [['fields', JSON.stringify({ ...fields, body })], file()])
      t.equal(uploaded.status, 200, `fields.body ${JSON.stringify(body)} is accepted`)
      handles.push(uploaded.body.storageHandle as string)
    }
    t.match(
      await upload(t, url, user, [['fields', JSON.stringify({ fileName: 'note.pdf' })], file()]),
      { status: 500, body: { code: 'wm3071', parameters: { field: 'processInstanceId' } } },
      'upload: missing ids with everything else missing too is 500',
    )
    t.match(await upload(t, url, user, [['fields', JSON.stringify({ processInstanceId, label: 5 })], file()]), {
      status: 500,
      body: { code: 'wm3071', parameters: { field: 'processId' } },
    })

    const operation = async (path: string, body: Record<string, unknown>) => {
      const response = await fetch(`${url}${path}`, {
        method: 'POST',
        headers: { user, 'content-type': 'application/json' },
        body: JSON.stringify({ ...HR, ...body }),
      })
      return {
        status: response.status,
        body: (await (path === '/file/download' && response.ok ? response.text() : response.json())) as unknown,
      }
    }
    const minimal = (storageHandle: string) => ({ processInstanceId, processId: fields.processId, storageHandle })
    t.match(
      await operation('/file/download', minimal(handles[0]!)),
      { status: 200, body: 'x' },
      'download with processInstanceId, processId and storageHandle only',
    )
    t.match(
      await operation('/file/delete', minimal(handles[0]!)),
      { status: 200, body: { isSuccess: true } },
      'delete with processInstanceId, processId and storageHandle only',
    )
    for (const path of ['/file/download', '/file/delete']) {
      t.match(await operation(path, {}), { status: 500, body: { code: 'wm3071' } }, `${path}: nothing but the tenant is 500 wm3071`)
      t.match(await operation(path, { processId: fields.processId }), {
        status: 500,
        body: { code: 'wm3071', parameters: { field: 'processInstanceId' } },
      })
      t.match(await operation(path, { processInstanceId }), { status: 500, body: { code: 'wm3071', parameters: { field: 'processId' } } })
      t.match(
        await operation(path, { processInstanceId, processId: fields.processId }),
        { status: 400, body: { code: 'wm4000', parameters: { field: 'storageHandle' } } },
        `${path}: the ids without storageHandle is 400 naming it`,
      )
    }
    t.equal((await storedInstance(store, processInstanceId)).processInstance.files.length, handles.length - 1)
    t.equal(storedFiles().length, handles.length - 1)
  },
)

t.test('a missing file function, or one without the schema it must declare, is 500 wm3070', async (t) => {
  const withoutUpload = await fileEngine(t, {}, (body) => {
    delete body.fileUploadFunction
  })
  const file: ['fileBody', Blob, string] = ['fileBody', new Blob([Buffer.from('x')]), 'note.pdf']
  t.match(
    await upload(t, withoutUpload.url, withoutUpload.users.employee.userId, [['fields', JSON.stringify(withoutUpload.fields)], file]),
    { status: 500, body: { code: 'wm3070' } },
  )
  const wrongSchema = await fileEngine(t, {}, (body) => {
    const functions = body.functions as Record<string, { input: { properties: Record<string, unknown>; required?: string[] } }>
    delete functions.acceptFile!.input.properties.fileName
    functions.acceptFile!.input.required = ['storageHandle']
  })
  t.match(await upload(t, wrongSchema.url, wrongSchema.users.employee.userId, [['fields', JSON.stringify(wrongSchema.fields)], file]), {
    status: 500,
    body: { code: 'wm3070', message: /fileName/ },
  })
  t.same(wrongSchema.storedFiles(), [], 'checked before any byte is stored')
})

t.test('content disposition carries the name safely', async (t) => {
  t.equal(contentDisposition('note.pdf'), 'attachment; filename="note.pdf"; filename*=UTF-8\'\'note.pdf')
  t.equal(contentDisposition('a"b\r\n\u00e9.txt'), 'attachment; filename="a_b___.txt"; filename*=UTF-8\'\'a%22b%0D%0A%C3%A9.txt')
})
