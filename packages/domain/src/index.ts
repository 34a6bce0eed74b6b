export type { Caller } from './caller';
export { CommitWatch, type NextCommit } from './commit-watch';
export type { DomainObserver, RecallStatus } from './context';
export { Deadline, deadlinePassed } from './deadline';
export { Domain, type DomainOptions } from './domain';
export {
  authFailureReason,
  boundDetail,
  DETAILED_CODES,
  describeIssues,
  fieldPath,
  type InputPart,
  invalidInput,
  MAX_DETAIL_LENGTH,
  overLimit,
  publicDetail,
  quoteName,
} from './error-detail';
export { DomainError, isDatabaseUnavailable } from './errors';
export { type ExportLine, type ExportLineType, type ExportPlan, ExportRefused, planExport } from './export';
export {
  type BatchStage,
  type GroupCommitObserver,
  GroupCommitter,
  type GroupedWrite,
  MAX_GROUP_SIZE,
  type SlowBatchReport,
} from './group-commit';
export {
  IMPORT_BATCH_SIZE,
  type ImportLine,
  type ImportOutcome,
  importLineOf,
  parseImportLine,
} from './import';
export { RequestLoaders, type VerificationPage } from './loaders';
export {
  DEFAULT_RATE_LIMITS,
  parseRateLimits,
  type RateLimit,
  type RateLimiter,
  type RateLimitPolicy,
  rateLimiterFor,
  TokenBucketRateLimiter,
} from './rate-limiter';
export {
  DEFAULT_RATE_LIMIT_REDIS_PREFIX,
  RedisRateLimiter,
  type RedisRateLimiterOptions,
  redisUrlForLogs,
} from './redis-rate-limiter';
export type { OperationResult, RawInput, RequestMeta } from './request';
export {
  decodeJsonBody,
  decodeJsonBytes,
  decodeUtf8,
  isJsonContentType,
  MAX_JSON_DEPTH,
  parseStrictJson,
} from './strict-json';
export { END_OF_TIME } from './temporal';
