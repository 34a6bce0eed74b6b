import { z } from 'zod';

/** WEBHOOKS_ALLOW_PRIVATE: read by every process that creates webhooks or delivers them. */
export const webhookTargetEnvShape = {
  /** `1` admits `http` and loopback or private targets (self-hosted setups and tests). */
  WEBHOOKS_ALLOW_PRIVATE: z.enum(['0', '1']).default('0'),
};

/** The delivery worker's settings, read by the indexer and by a gateway that embeds it. */
export const webhookDeliveryEnvShape = {
  /** How long deliveries are retried after the first failure before the webhook is disabled. */
  WEBHOOK_RETRY_WINDOW_SECONDS: z.coerce.number().int().min(1).max(604_800).default(86_400),
  /** The first retry's delay; each further one doubles it (with jitter), up to an hour. */
  WEBHOOK_BACKOFF_BASE_MS: z.coerce.number().int().min(1).max(3_600_000).default(5_000),
  /** A delivery that has not answered within this is a failure. */
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
};
