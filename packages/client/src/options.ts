/** Per-call options, the same for every operation. */
export interface CallOptions {
  /**
   * Idempotency key of a write. Omitted: the client makes one per call and sends the same one on
   * every retry of that call. Give your own to make a retry across process restarts safe.
   */
  idempotencyKey?: string;
  /** Sent as `X-Request-Id` (echoed in the answer and in any error's `request_id`). */
  requestId?: string;
  /** Cancels the call, including any wait between retries. */
  signal?: AbortSignal;
}
