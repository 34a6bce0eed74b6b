export { cliLines, runSvc, type SvcRun } from './cli';
export { ApiClient, type CallOptions, type CallResult, freshKey, sha256Hex } from './client';
export { ADMIN_URL, createTestDatabase, type TestDatabase, testMigrateOptions } from './database';
export { type Gate, gate } from './gate';
export { ALL_SCOPES, type MintOptions, TestIssuer } from './issuer';
export { seedPgliteDirectory } from './pglite-template';
export { freePort } from './ports';
export { enrolledSessionCaller } from './session-caller';
// The OpenID provider harness is `@tms/testkit/oidc-provider`: only the tests that need it load it.
