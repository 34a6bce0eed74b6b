import crypto from 'node:crypto';
import { canonicalJson } from '@tms/ledger';

/**
 * Mem0's `get_all` output as import lines (docs/import.md has the mapping): each Mem0 memory
 * becomes a memory in the namespace of its owner, `<root>/user:<user_id>` (else `agent:`,
 * `app:`, `run:`, else `unowned`), valid from its `created_at`, keyed `mem0:<id>` (decisions
 * §12), imported under `mem0-<id>`, and citing as evidence the Mem0 record itself as exported
 * (its metadata, hash, `updated_at` and every owner id kept verbatim).
 */

/** The namespace under which every Mem0 owner gets its own (created on demand). */
export const MEM0_ROOT = 'mem0';

/** Owner fields in the order one names a memory's namespace. */
const OWNER_FIELDS = [
  ['user_id', 'user'],
  ['agent_id', 'agent'],
  ['app_id', 'app'],
  ['run_id', 'run'],
] as const;

/** The owner namespace's name of a record without any owner id. */
export const UNOWNED = 'unowned';

/** A Mem0 record converted: the name of its owner namespace and its line (without `namespace_id`), or why not. */
export type Mem0Line = { ok: true; owner: string; line: Record<string, unknown> } | { ok: false; detail: string };

/** The records of a `get_all` answer: a list, or `{"results": [...]}` (Mem0's v1.1 format and the platform's pages). */
export function mem0Records(document: unknown): unknown[] {
  if (Array.isArray(document)) return document;
  if (document !== null && typeof document === 'object') {
    const results = (document as { results?: unknown }).results;
    if (Array.isArray(results)) return results;
  }
  throw new Error('not a Mem0 get_all output: expected a JSON list of memories or {"results": [...]}');
}

/**
 * An ISO 8601 time as Unix seconds, exactly (microseconds kept as the fraction). Mem0 writes
 * `created_at` with an offset (`2024-07-20T01:29:28.123456-07:00`) or `Z`; a time without
 * either is read as UTC. Null when it is no such time.
 */
export function isoSeconds(text: string): number | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?(Z|z|[+-]\d{2}(?::?\d{2})?)?$/.exec(
    text,
  );
  if (!match) return null;
  const [, year, month, day, hour, minute, second, fraction, zone] = match;
  const whole = Date.UTC(
    Number(year),
    Number(month) - 1,
    Number(day),
    Number(hour),
    Number(minute),
    Number(second ?? 0),
  );
  const date = new Date(whole);
  // Date.UTC rolls over (February 30th becomes March 2nd): such a date is refused.
  if (date.getUTCDate() !== Number(day) || date.getUTCMonth() !== Number(month) - 1 || Number(hour) > 23) return null;
  let offsetMinutes = 0;
  if (zone && zone !== 'Z' && zone !== 'z') {
    const sign = zone.startsWith('-') ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    offsetMinutes = sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || 0));
  }
  const seconds = whole / 1000 - offsetMinutes * 60;
  if (!fraction) return seconds;
  return seconds >= 0 ? Number(`${seconds}${fraction}`) : seconds + Number(fraction);
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

/** The name of a record's owner namespace: `user:<id>`, `agent:<id>`, `app:<id>`, `run:<id>` or `unowned`. */
export function ownerOf(record: Record<string, unknown>): string {
  for (const [field, prefix] of OWNER_FIELDS) {
    const id = text(record[field]);
    if (id !== null) return `${prefix}:${id}`;
  }
  return UNOWNED;
}

/** An import key from a Mem0 id: `mem0-<id>` when the id is a plain token (a UUID), else from its hash. */
function importKeyOf(id: string): string {
  return /^[A-Za-z0-9._:-]{1,180}$/.test(id)
    ? `mem0-${id}`
    : `mem0-${crypto.createHash('sha256').update(id).digest('hex')}`;
}

/** One Mem0 record as an import line, with its owner's namespace name (the caller fills in `namespace_id`). */
export function mem0Line(record: unknown): Mem0Line {
  if (record === null || typeof record !== 'object' || Array.isArray(record)) {
    return { ok: false, detail: 'mem0: a memory must be a JSON object' };
  }
  const fields = record as Record<string, unknown>;
  const id = typeof fields.id === 'string' || typeof fields.id === 'number' ? String(fields.id) : null;
  if (id === null || id === '') return { ok: false, detail: 'mem0.id: is required (a string)' };
  const memory = text(fields.memory);
  if (memory === null) return { ok: false, detail: 'mem0.memory: is required (a non-empty string)' };
  const createdAt = text(fields.created_at);
  const validFrom = createdAt === null ? null : isoSeconds(createdAt);
  if (validFrom === null) return { ok: false, detail: 'mem0.created_at: is required (an ISO 8601 time)' };
  const metadata = fields.metadata;
  const procedural =
    metadata !== null &&
    typeof metadata === 'object' &&
    (metadata as { memory_type?: unknown }).memory_type === 'procedural_memory';
  // The record as exported, in canonical form: the same record always gives the same excerpt.
  const excerpt = canonicalJson(record);
  return {
    ok: true,
    owner: ownerOf(fields),
    line: {
      import_key: importKeyOf(id),
      kind: procedural ? 'procedure' : 'claim',
      text: memory,
      valid_from: validFrom,
      key: `mem0:${id}`,
      evidence: {
        source_locator: `mem0://memories/${encodeURIComponent(id)}`,
        content_root_sha256: crypto.createHash('sha256').update(excerpt).digest('hex'),
        excerpt,
      },
    },
  };
}
