/** The catalogue codes the identity checks answer with (docs/reference/identity.md#identity-modes). */
import type { ErrorCode } from '../../openapi/generated/errors.js'

/** Each service's own codes (`satisfies IdentityCodes<GatewayErrorCode>`). */
export interface IdentityCodes<Code extends ErrorCode = ErrorCode> {
  /**
   * 401: the `user` header is missing where an actor is required, or names no user (header mode); the token's user is unknown (jwt mode).
   */
  unknownUser: Code
  /** 401: no bearer token, or one that does not verify (jwt mode). */
  unauthenticated: Code
  /** 403: the token's user may not act as the one the `user` header names, or is no admin on an admin route. */
  forbidden: Code
  /** 401: an admin route without the right ADMIN_TOKEN in header mode (the gateway's only). */
  adminToken?: Code
}
