export type { Caller } from './caller';
export { Domain, type OperationResult, type RawInput, type RequestMeta } from './domain';
export { DomainError, isDatabaseUnavailable } from './errors';
export { RequestLoaders, type VerificationPage } from './loaders';
export { END_OF_TIME } from './temporal';
