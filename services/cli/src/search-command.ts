import fs from 'node:fs';
import path from 'node:path';
import { meiliApiKeyOf } from '@tms/composition';
import { ensureSearchKey } from '@tms/search';
import type { CliEnv } from './env';

export interface CreateKeyOptions {
  output: string;
  uid?: string | undefined;
  indexes: readonly string[];
}

/**
 * `svc search create-key`: the gateway's search-only Meilisearch key, made with this process's
 * (admin) key and written to `output` for MEILI_API_KEY_FILE. The key never reaches stdout.
 */
export async function createSearchKey(env: CliEnv, options: CreateKeyOptions): Promise<string> {
  if (!env.MEILI_URL) throw new Error('svc search create-key needs MEILI_URL (the Meilisearch server)');
  const made = await ensureSearchKey({
    url: env.MEILI_URL,
    adminKey: meiliApiKeyOf(env),
    uid: options.uid,
    indexes: options.indexes,
  });
  // Written beside the target and renamed over it, so a reader sees the old file or the whole new one.
  const target = path.resolve(options.output);
  const partial = `${target}.${process.pid}.tmp`;
  fs.writeFileSync(partial, `${made.key}\n`, { mode: 0o600 });
  fs.renameSync(partial, target);
  return `search key ${made.uid} ${made.outcome} (search on ${options.indexes.join(', ')}), written to ${options.output}`;
}
