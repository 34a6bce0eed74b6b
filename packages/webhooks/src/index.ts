export { type DeliveryReport, type DeliveryWorkerOptions, WebhookDeliveryWorker } from './delivery-worker';
export { webhookDeliveryEnvShape, webhookTargetEnvShape } from './env';
export { webhookMetrics } from './metrics';
export { mintWebhookSecret, SIGNATURE_HEADER, signatureHeader } from './signature';
export { isNonPublicAddress, resolveTarget, TargetRefusedError, webhookUrlProblem } from './target-policy';
