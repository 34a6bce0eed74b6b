export { ApiClient, type CallOptions, type CallResult, freshKey, sha256Hex } from './client';
export { ADMIN_URL, createTestDatabase, type TestDatabase } from './database';
export { ALL_SCOPES, type MintOptions, TestIssuer } from './issuer';
