export type { Caller } from './caller';
export { CommitWatch, type NextCommit } from './commit-watch';
export { Deadline, deadlinePassed } from './deadline';
export { Domain, type OperationResult, type RawInput, type RequestMeta } from './domain';
export { DomainError, isDatabaseUnavailable } from './errors';
export { GroupCommitter, MAX_GROUP_SIZE } from './group-commit';
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
export { END_OF_TIME } from './temporal';
