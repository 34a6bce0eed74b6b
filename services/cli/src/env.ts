import type { ToolSet } from '@tms/agent-tools';
import { checkDomainEnv, domainEnvShape, listEveryProblem } from '@tms/composition';
import { z } from 'zod';

const schema = z
  .object({
    // DATABASE_URL, DATA_DIR, SESSION_*, OAUTH_*, DEV_AUTH, NODE_ENV: read as the gateway reads them.
    ...domainEnvShape,
    /** `svc mcp`: the bearer token the agent tools act with. */
    TMS_TOKEN: z.string().min(1).optional(),
    /** `svc mcp`: the default workspace (X-Service-Workspace) of the agent tools. */
    TMS_WORKSPACE: z.string().min(1).optional(),
    /**
     * `svc mcp` on Postgres: run the indexer in the process (the default, as the gateway does) or
     * leave it to an indexer service or gateway. On the embedded ledger it always runs: nothing
     * else can open the ledger while `svc mcp` holds it.
     */
    INDEXER: z.enum(['embedded', 'external']).default('embedded'),
    /** `svc mcp`: the tools it lists, `memory` (remember and recall) or `all` (administration too). */
    MCP_TOOLS: z.enum(['memory', 'all'] satisfies ToolSet[]).default('memory'),
    /** Recorded as the operator (`urn:tms:operator`) of `svc admin` issuance and revocation. */
    USER: z.string().min(1).optional(),
    /** `svc migrate`: `partitioned` lays every distributed table out by hash of workspace_id (docs/scale-out.md). */
    DATABASE_LAYOUT: z.enum(['plain', 'partitioned']).default('plain'),
    /** `svc migrate`: `1` distributes and replicates the tables on a Citus coordinator after migrating. */
    CITUS: z.enum(['0', '1']).default('0'),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  })
  .superRefine(checkDomainEnv, listEveryProblem);

export type CliEnv = z.infer<typeof schema>;

/** Every variable this service reads (the deployment test checks compose against it). */
export const ENV_KEYS: readonly string[] = Object.keys(schema.shape);

/**
 * The issuers the gateway verifies, which `svc admin enroll` checks its `--issuer` against.
 * Compose hands them to the CLI as `${VAR:-}`: for the CLI an empty one is an unset one (the
 * gateway, which needs them, names an empty one as a mistake).
 */
const ISSUER_KEYS: ReadonlySet<string> = new Set([
  'SESSION_ISSUER',
  'SESSION_JWKS_URI',
  'SESSION_AUDIENCE',
  'OAUTH_ISSUER',
  'OAUTH_JWKS_URI',
  'OAUTH_AUDIENCE',
]);

export function parseEnv(source: Record<string, string | undefined>): CliEnv {
  const given = Object.fromEntries(
    Object.entries(source).filter(([key, value]) => !(ISSUER_KEYS.has(key) && value === '')),
  );
  const result = schema.safeParse(given);
  if (result.success) return result.data;
  throw new Error(
    `invalid configuration: ${result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
  );
}
