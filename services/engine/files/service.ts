/**
 * Files of a process instance (docs/reference/files.md), each through the model's file function:
 * the bytes are streamed to the store's file storage (GridFS / `DATA_DIR/files`), the
 * upload function may reject them (they are removed again) or rename them, and the instance's
 * `files` list and activity log follow. Stored bytes never outlive a failed upload.
 */
import type { FileUploadFields } from '../../../openapi/generated/schemas.js'
import type { Readable } from 'node:stream'
import type { FastifyBaseLogger } from 'fastify'
import type { File, FileOperationRequest } from '../../../openapi/generated/schemas.js'
import type { EngineErrorCode } from '../../../openapi/generated/errors.js'
import type { ErrorFactory } from '../../../plugins/errors/service-error.js'
import type { Actor } from '../../../plugins/identity/actor.js'
import type { FileStore, StoredFile } from '../../../store/port.js'
import type { ActivityRepository } from '../instances/activities.js'
import type { DataInstance, FileRecord, FlowFunctionDefinition, JsonSchema } from '../../../runtime/types.js'
import { commitChange, runModelFunction } from '../instances/loaded-instance-operations.js'
import { type AdditionalHeaders, type LoadedInstance, loadInstance, type InstanceDependencies } from '../instances/loaded-instance.js'
import type { ActivityEntry } from '../instances/service.js'
import { storingDataWrites } from '../flow-host/data-conflicts.js'

export type FileFunctionKind = 'upload' | 'download' | 'delete'

/** The `fields` part of an upload (contract: FileUploadFields). */
export type UploadFields = FileUploadFields

/** The bytes of an upload as they arrive: read once, by the file storage. */
export interface UploadSource {
  stream: Readable
  contentType: string
  /** True once the stream was cut at MAX_UPLOAD_BYTES. */
  truncated(): boolean
}

/**
 * An upload whose bytes are stored but which is not part of the instance yet: committed once the
 * whole request was read and found valid, or discarded (its bytes removed), so that a request refused
 * after its file part (a second file, a part too many) keeps nothing.
 */
export interface StagedUpload {
  /** Runs the upload function and adds the file to the instance; on any failure the bytes are removed. */
  commit(): Promise<File>
  discard(): Promise<void>
}

/** The ids every file operation needs; a missing one is 500 wm3071, before anything else is checked (docs/reference/files.md). */
export function requireInstanceIds(
  fail: ErrorFactory<EngineErrorCode>,
  ids: { processInstanceId?: string | undefined; processId?: string | undefined },
): void {
  for (const field of ['processInstanceId', 'processId'] as const) {
    if (!ids[field]) throw fail('wm3071', { args: [field], parameters: { field } })
  }
}

export interface Download {
  stream: Readable
  size: number
  fileName: string
  contentType: string
}

export interface FileServiceDependencies extends InstanceDependencies {
  activities: ActivityRepository
  files: FileStore
  maxUploadBytes: number
  log: FastifyBaseLogger
}

/** The properties a function's schema declares. */
function declared(schema: JsonSchema | undefined): string[] {
  const properties = schema?.properties
  return typeof properties === 'object' && properties !== null ? Object.keys(properties) : []
}

/** What each file function's schemas must declare (docs/reference/files.md): [input properties, output properties]. */
const REQUIRED_DECLARATIONS: Record<FileFunctionKind, [string[], string[]]> = {
  upload: [['storageHandle', 'fileName'], ['storageHandle']],
  download: [['storageHandle'], []],
  delete: [['storageHandle'], []],
}

function contractFile(record: FileRecord): File {
  return { ...record }
}

/** What the activity record of a file operation says of the file. */
function fileActivityDetails(record: FileRecord): Record<string, unknown> {
  return { fileId: record.id, fileName: record.fileName, storageHandle: record.storageHandle }
}

export class FileService {
  constructor(private readonly deps: FileServiceDependencies) {}

  /**
   * Checks everything that needs no bytes first (ids, instance, authorization, task, function), then
   * stores the bytes; the file joins the instance only when the staged upload is committed.
   */
  async stage(actor: Actor, fields: UploadFields, source: UploadSource, additionalHeaders: AdditionalHeaders): Promise<StagedUpload> {
    const { fail } = this.deps
    const loaded = await this.instanceOf(actor, fields, additionalHeaders)
    const { stored } = loaded
    const task = stored.processInstance.tasks.find((candidate) => candidate.taskId === fields.taskId)
    if (!task) throw fail('wm3005', { args: [fields.taskId], parameters: { taskId: fields.taskId, processInstanceId: stored._id } })
    const functionId = this.fileFunction(loaded, 'upload')

    const kept = await this.deps.files.put(source.stream, { fileName: fields.fileName, contentType: source.contentType })
    if (source.truncated()) {
      await this.discard(kept)
      throw fail('wm3073', { args: [`the file is larger than ${this.deps.maxUploadBytes} bytes`], parameters: { field: 'fileBody' } })
    }
    return {
      commit: async () => {
        try {
          return await this.addToInstance(actor, loaded, task, functionId, fields, kept, source.contentType)
        } catch (error) {
          await this.discard(kept)
          throw error
        }
      },
      discard: () => this.discard(kept),
    }
  }

  /** Runs the upload function on stored bytes and adds the file (as the function may have renamed it) to the instance. */
  private async addToInstance(
    actor: Actor,
    loaded: LoadedInstance,
    task: { taskId: string; stepId: string },
    functionId: string,
    fields: UploadFields,
    kept: StoredFile,
    contentType: string,
  ): Promise<File> {
    const { stored, env } = loaded
    const input = {
      storageHandle: kept.storageHandle,
      fileName: fields.fileName,
      fileType: contentType,
      label: fields.label,
      size: kept.size,
    }
    const result = await runModelFunction(this.deps.fail, loaded, functionId, input, task.taskId)
    const output = result.output
    const record: FileRecord = {
      id: env.newId(),
      storageHandle: typeof output.storageHandle === 'string' && output.storageHandle !== '' ? output.storageHandle : kept.storageHandle,
      label: typeof output.label === 'string' ? output.label : fields.label,
      fileName: typeof output.fileName === 'string' && output.fileName !== '' ? output.fileName : fields.fileName,
      fileType: contentType,
      size: kept.size,
      taskId: task.taskId,
      userId: actor.userId,
      uploadDate: env.now().toISOString(),
    }
    await this.commitFiles(actor, loaded, [...stored.processInstance.files, record], result.dataInstance, {
      type: 'fileUpload',
      taskId: task.taskId,
      stepId: task.stepId,
      details: { ...fileActivityDetails(record), size: kept.size },
    })
    return contractFile(record)
  }

  /** Runs the download function, logs `fileDownload` (no other change) and hands out the bytes. */
  async download(actor: Actor, body: FileOperationRequest, additionalHeaders: AdditionalHeaders): Promise<Download> {
    const loaded = await this.instanceOf(actor, body, additionalHeaders)
    const { record, functionId } = this.fileAndFunction(loaded, body.storageHandle, 'download')
    await runModelFunction(this.deps.fail, loaded, functionId, { storageHandle: record.storageHandle }, body.taskId)
    // A download changes no instance: the function's data writes are stored now, all together.
    await storingDataWrites(this.deps.fail, loaded.env.unitOfWork, () => loaded.env.unitOfWork.applyAlone())
    const found = await this.deps.files.get(record.storageHandle)
    if (!found) throw this.fileNotFound(record.storageHandle, loaded.stored._id)
    try {
      await this.deps.activities.record({
        processInstanceId: loaded.stored._id,
        timeStamp: loaded.env.now().toISOString(),
        type: 'fileDownload',
        userId: actor.userId,
        userName: actor.fullName,
        taskId: body.taskId,
        stepId: body.taskDefinitionKey,
        details: fileActivityDetails(record),
      })
    } catch (error) {
      found.stream.destroy()
      throw error
    }
    return { stream: found.stream, size: found.size, fileName: record.fileName, contentType: record.fileType || found.contentType }
  }

  /** Runs the delete function, removes the file from the instance (stored first), then its bytes. */
  async delete(actor: Actor, body: FileOperationRequest, additionalHeaders: AdditionalHeaders): Promise<{ isSuccess: boolean }> {
    const loaded = await this.instanceOf(actor, body, additionalHeaders)
    const { record, functionId } = this.fileAndFunction(loaded, body.storageHandle, 'delete')
    const result = await runModelFunction(this.deps.fail, loaded, functionId, { storageHandle: record.storageHandle }, body.taskId)
    const remaining = loaded.stored.processInstance.files.filter((file) => file.id !== record.id)
    await this.commitFiles(actor, loaded, remaining, result.dataInstance, {
      type: 'fileDelete',
      taskId: body.taskId,
      stepId: body.taskDefinitionKey,
      details: fileActivityDetails(record),
    })
    // The file is gone from the instance; bytes left behind by a failure here are only unreachable.
    await this.deps.files
      .delete(record.storageHandle)
      .catch((error: unknown) =>
        this.deps.log.error({ err: error, storageHandle: record.storageHandle }, 'the bytes of a deleted file could not be removed'),
      )
    return { isSuccess: true }
  }

  /** Stores a file function's run: its data changes, the instance's files as they are now and the operation's activity. */
  private async commitFiles(
    actor: Actor,
    loaded: LoadedInstance,
    files: FileRecord[],
    dataInstance: DataInstance,
    activity: ActivityEntry,
  ): Promise<void> {
    await commitChange(this.deps, loaded, actor, {
      state: { processInstance: { ...loaded.stored.processInstance, files }, dataInstance },
      effects: [],
      event: 'Updated',
      activities: [activity],
    })
  }

  /** Missing ids of a file operation answer 500 (wm3071, docs/reference/http.md#unusual-statuses). */
  private async instanceOf(
    actor: Actor,
    ids: {
      processInstanceId?: string | undefined
      processId?: string | undefined
      businessKey?: string | undefined
      appId?: string | undefined
    },
    additionalHeaders: AdditionalHeaders,
  ): Promise<LoadedInstance> {
    requireInstanceIds(this.deps.fail, ids)
    return loadInstance(this.deps, actor, {
      processInstanceId: ids.processInstanceId as string,
      processId: ids.processId,
      businessKey: ids.businessKey,
      appId: ids.appId,
      additionalHeaders,
      check: 'access',
    })
  }

  /** The file of the instance with that handle (404 wm3072) and the model's function for the operation. */
  private fileAndFunction(
    loaded: LoadedInstance,
    storageHandle: string | undefined,
    kind: FileFunctionKind,
  ): { record: FileRecord; functionId: string } {
    if (!storageHandle)
      throw this.deps.fail('wm4000', { args: ['storageHandle must be a non-empty string'], parameters: { field: 'storageHandle' } })
    const record = loaded.stored.processInstance.files.find((file) => file.storageHandle === storageHandle)
    if (!record) throw this.fileNotFound(storageHandle, loaded.stored._id)
    return { record, functionId: this.fileFunction(loaded, kind) }
  }

  /** The model's file function of that kind, when it exists and declares what it must (500 wm3070 otherwise). */
  private fileFunction({ compiled, env }: LoadedInstance, kind: FileFunctionKind): string {
    const functionId = compiled.fileFunction(kind)
    const wrong = (reason: string) =>
      this.deps.fail('wm3070', { args: [`file${kind[0]?.toUpperCase()}${kind.slice(1)}Function ${reason}`], parameters: { kind } })
    if (!functionId) throw wrong('is not set in the process model')
    const definition: FlowFunctionDefinition | undefined =
      compiled.model.modelBody.functions?.[functionId] ?? env.host.appFunction(functionId)
    if (!definition) throw wrong(`names function ${functionId}, which does not exist`)
    const [input, output] = REQUIRED_DECLARATIONS[kind]
    const missingInput = input.filter((name) => !declared(definition.input).includes(name))
    const missingOutput = output.filter((name) => !declared(definition.output).includes(name))
    if (missingInput.length > 0) throw wrong(`${functionId} does not declare ${missingInput.join(', ')} in its input schema`)
    if (missingOutput.length > 0) throw wrong(`${functionId} does not declare ${missingOutput.join(', ')} in its output schema`)
    return functionId
  }

  private fileNotFound(storageHandle: string, processInstanceId: string) {
    return this.deps.fail('wm3072', { args: [storageHandle], parameters: { storageHandle, processInstanceId } })
  }

  /** Removes bytes a failed upload stored; a failure to do so is logged, the upload's own error answered. */
  private async discard(kept: StoredFile): Promise<void> {
    try {
      await this.deps.files.delete(kept.storageHandle)
    } catch (error) {
      this.deps.log.error({ err: error, storageHandle: kept.storageHandle }, 'the bytes of a failed upload could not be removed')
    }
  }
}
