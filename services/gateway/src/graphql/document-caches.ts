import type { DocumentNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { GraphQLContext } from './context';

/** Parsed documents (and parse errors) kept per process, least recently used dropped first. */
export const MAX_CACHED_DOCUMENTS = 1000;

/**
 * A map holding at most `max` entries, dropping the least recently read or written. Yoga's own
 * parse cache (lru-cache with a TTL) read the clock on every lookup; this one does not.
 */
export class RecentlyUsed<K, V> {
  private readonly entries = new Map<K, V>();

  constructor(private readonly max: number) {}

  get(key: K): V | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      // Most recently used last: the first entry is the one to drop.
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  set(key: K, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value as K);
  }

  get size(): number {
    return this.entries.size;
  }
}

/**
 * Validation results remembered per parsed document (the parse cache hands out the same
 * document for the same text). This server's schema and validation rules never change, so
 * the document alone is the key: Yoga's own validation cache rebuilt a key from every rule's
 * name on each request. Passes and failures alike are remembered, as Yoga's were.
 */
export function validationResults(): Plugin<GraphQLContext> {
  const results = new WeakMap<DocumentNode, readonly Error[]>();
  return {
    onValidate({ params: { documentAST }, setResult }) {
      const known = results.get(documentAST);
      if (known) {
        setResult(known);
        return;
      }
      return ({ result }) => {
        results.set(documentAST, result);
      };
    },
  };
}
