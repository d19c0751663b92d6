/**
 * The engine signs webhook deliveries with the SDK's own signature module: one implementation, which
 * receivers get in the published `@workflow-service/sdk` package and the service uses from here.
 */
export { SIGNATURE_PREFIX, WEBHOOK_HEADERS, webhookSignature } from '../../sdk/signature.js'
