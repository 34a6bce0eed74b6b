import type { Namespace, TmsClient } from '@tms/client';

/** A namespace tuple as a map key. */
export const pathKey = (path: readonly string[]): string => JSON.stringify(path);

/** Of namespaces sharing one path (siblings' names need not be unique), the oldest; ties by id. */
function older(a: Namespace, b: Namespace): Namespace {
  if (a.created_at !== b.created_at) return a.created_at < b.created_at ? a : b;
  return a.id < b.id ? a : b;
}

async function sha256Hex(text: string): Promise<string> {
  const digest = await globalThis.crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, '0')).join('');
}

/**
 * The workspace's namespaces as LangGraph namespace tuples: a tuple is a namespace's
 * `display_path`, the names from a root down. Paths found are remembered for the life of the
 * store (namespaces are never deleted); a missing path is looked up again each time.
 */
export class NamespaceDirectory {
  private readonly ids = new Map<string, string>();
  private readonly paths = new Map<string, string[]>();
  private readonly creating = new Map<string, Promise<string>>();

  constructor(private readonly client: TmsClient) {}

  /** Every namespace the caller can read, in the service's order (display path, then id), one per path. */
  async list(): Promise<Namespace[]> {
    const chosen = new Map<string, Namespace>();
    for await (const namespace of this.client.paginate('namespaces.list', { limit: 100 })) {
      const key = pathKey(namespace.display_path);
      const held = chosen.get(key);
      chosen.set(key, held ? older(held, namespace) : namespace);
    }
    for (const [key, namespace] of chosen) {
      this.ids.set(key, namespace.id);
      this.paths.set(namespace.id, namespace.display_path);
    }
    return [...chosen.values()];
  }

  /** The tuple of a namespace id seen in a listing. */
  pathOf(id: string): string[] | undefined {
    return this.paths.get(id);
  }

  /** The namespace at a path, or null when there is none. */
  async find(path: readonly string[]): Promise<string | null> {
    const known = this.ids.get(pathKey(path));
    if (known) return known;
    await this.list();
    return this.ids.get(pathKey(path)) ?? null;
  }

  /**
   * The namespace at a path, creating what is missing level by level. Concurrent callers in this
   * process share one creation; callers elsewhere with the same credential send the same
   * idempotency key, so the service creates the namespace once; any other duplicate loses to the
   * oldest namespace of that path, which every store then uses.
   */
  async ensure(path: readonly string[]): Promise<string> {
    const key = pathKey(path);
    const known = this.ids.get(key);
    if (known) return known;
    const pending = this.creating.get(key);
    if (pending) return pending;
    const creation = this.create(path).finally(() => this.creating.delete(key));
    this.creating.set(key, creation);
    return creation;
  }

  private async create(path: readonly string[]): Promise<string> {
    const found = await this.find(path);
    if (found) return found;
    const parentId = path.length > 1 ? await this.ensure(path.slice(0, -1)) : null;
    const name = path[path.length - 1] as string;
    const seed = `${this.client.workspace ?? ''}\u0000${parentId ?? ''}\u0000${name}`;
    const idempotencyKey = `tms-store-namespace-${await sha256Hex(seed)}`;
    await this.client.namespaces.create({ parent_id: parentId, name }, { idempotencyKey });
    await this.list();
    const adopted = this.ids.get(pathKey(path));
    if (adopted) return adopted;
    // The key replayed a namespace renamed since (its answer is kept as it was): make a new one.
    const { namespace } = await this.client.namespaces.create({ parent_id: parentId, name });
    await this.list();
    return this.ids.get(pathKey(path)) ?? namespace.id;
  }
}
