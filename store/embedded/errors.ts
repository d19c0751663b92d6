/** Errors shaped like the MongoDB server's (name, numeric code), for the failures other than duplicate keys. */
export class StoreServerError extends Error {
  readonly code: number
  constructor(code: number, message: string) {
    super(message)
    this.name = 'MongoServerError'
    this.code = code
  }
}

/** MongoDB's codes for the failures the embedded store reports. */
export const ErrorCodes = {
  BadValue: 2,
  FailedToParse: 9,
  InvalidNamespace: 73,
  ImmutableField: 66,
  IndexOptionsConflict: 85,
  IndexKeySpecsConflict: 86,
  IndexBuildAborted: 276,
} as const

/** A call the MongoDB driver itself would refuse before reaching the server. */
export class StoreArgumentError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'MongoInvalidArgumentError'
  }
}
