// biome-ignore-all lint/suspicious/noExplicitAny: types built at run time from catalog schemas are untyped for Pothos.
import {
  actorSchema,
  commitSchema,
  credentialSchema,
  evidenceDeletionReceiptSchema,
  evidenceSchema,
  grantSchema,
  installationSchema,
  memberSchema,
  memoryDeletionReceiptSchema,
  memoryListItemSchema,
  memorySchema,
  memoryViewSchema,
  namespaceSchema,
  revisionSchema,
  verificationSchema,
  webhookSchema,
  workspaceSchema,
} from '@tms/catalog';
import type { z } from 'zod';
import { builder } from '../builder';
import { at, boundedList } from '../context';
import { enumOf } from '../enums';
import {
  ActorRef,
  CommitRef,
  CredentialRef,
  EvidenceDeletionReceiptRef,
  EvidenceRef,
  GrantRef,
  InstallationRef,
  MemberRef,
  MemoryDeletionReceiptRef,
  MemoryListItemRef,
  MemoryRef,
  MemoryRevisionRef,
  MemoryViewRef,
  NamespaceRef,
  VerificationRef,
  WebhookRef,
  WorkspaceRef,
} from '../refs';

/**
 * GraphQL input and output types derived from the catalog's zod schemas, so that every
 * operation (and every one added later) has a field whose arguments mirror its `/v1` input
 * and whose payload mirrors its answer. The GraphQL types only shape the transport: values
 * are handed to the domain, which validates them against the same schemas as `/v1`.
 *
 * Field names are the catalog's snake_case keys in camelCase; `decode` turns a GraphQL input
 * value back into the catalog's JSON. Enum values keep the spec's strings.
 */

interface Def {
  type: string;
  innerType?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  options?: z.ZodType[];
  entries?: Record<string, string>;
  values?: unknown[];
  format?: string;
  checks?: { _zod: { def: { check: string; maximum?: number } } }[];
}

const defOf = (schema: z.ZodType) => (schema as unknown as { _zod: { def: Def } })._zod.def;

export const camel = (key: string) => key.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
export const pascal = (key: string) => {
  const c = camel(key);
  return c.charAt(0).toUpperCase() + c.slice(1);
};
const singular = (word: string) =>
  word.endsWith('ies')
    ? `${word.slice(0, -3)}y`
    : word.endsWith('s') && !word.endsWith('ss')
      ? word.slice(0, -1)
      : word;

/** Strip optional, default, nullable and readonly wrappers. */
export function unwrap(schema: z.ZodType): { inner: z.ZodType; optional: boolean; nullable: boolean } {
  let inner = schema;
  let optional = false;
  let nullable = false;
  for (;;) {
    const def = defOf(inner);
    if ((def.type === 'optional' || def.type === 'default' || def.type === 'prefault') && def.innerType) {
      optional = true;
      inner = def.innerType;
    } else if (def.type === 'nullable' && def.innerType) {
      nullable = true;
      inner = def.innerType;
    } else if (def.type === 'readonly' && def.innerType) {
      inner = def.innerType;
    } else {
      return { inner, optional, nullable };
    }
  }
}

/** The keys of an object schema (a refined object is still an object). */
export function shapeOf(schema: z.ZodType | null): Record<string, z.ZodType> {
  if (!schema) return {};
  const def = defOf(schema);
  if (def.type !== 'object' || !def.shape) throw new Error(`expected an object schema, got ${def.type}`);
  return def.shape;
}

const isIdKey = (key: string) => key === 'id' || key.endsWith('_id') || key.endsWith('_ids');

function scalarFor(def: Def, key: string): string | null {
  switch (def.type) {
    case 'string':
      return isIdKey(key) ? 'ID' : 'String';
    case 'number':
      return def.format === 'safeint' || def.format === 'int32' ? 'SafeInt' : 'Float';
    case 'boolean':
      return 'Boolean';
    case 'literal':
      return typeof def.values?.[0] === 'string' ? 'String' : null;
    default:
      return null;
  }
}

function maxItems(def: Def): number {
  for (const check of def.checks ?? []) {
    if (check._zod.def.check === 'max_length' && check._zod.def.maximum !== undefined) return check._zod.def.maximum;
  }
  return 100;
}

/**
 * Object members of a union, merged into one field map: a field absent from a member becomes
 * optional, and a discriminator (a string literal in every member) becomes an enum of them.
 */
function mergedShape(options: z.ZodType[]): { shape: Record<string, z.ZodType>; everywhere: Set<string> } {
  const shape: Record<string, z.ZodType> = {};
  const all = new Map<string, z.ZodType[]>();
  for (const option of options) {
    for (const [key, schema] of Object.entries(shapeOf(option))) {
      shape[key] ??= schema;
      all.set(key, [...(all.get(key) ?? []), schema]);
    }
  }
  const everywhere = new Set([...all].filter(([, schemas]) => schemas.length === options.length).map(([k]) => k));
  for (const key of everywhere) {
    const literals = (all.get(key) ?? []).map((schema) => defOf(schema));
    if (literals.every((d) => d.type === 'literal' && typeof d.values?.[0] === 'string')) {
      const values = literals.flatMap((d) => d.values as string[]);
      shape[key] = { _zod: { def: { type: 'enum', entries: Object.fromEntries(values.map((v) => [v, v])) } } } as never;
    }
  }
  return { shape, everywhere };
}

// ---- inputs --------------------------------------------------------------------------------

/** The name of the input type at `key` (`item`: the element of the list at `key`). */
type Naming = (key: string, item: boolean) => string;

interface InputShape {
  type: any;
  /** The GraphQL value back to catalog JSON. */
  decode(value: unknown): unknown;
}

const inputTypes = new Map<string, { schema: z.ZodType; ref: any }>();

function inputObject(
  name: string,
  shape: Record<string, z.ZodType>,
  everywhere: Set<string> | null,
  naming: Naming,
  schema: z.ZodType,
): InputShape {
  const fields = Object.entries(shape).map(([key, fieldSchema]) => {
    const { inner, optional, nullable } = unwrap(fieldSchema);
    const field = inputFor(inner, key, naming);
    const required = !optional && !nullable && (everywhere === null || everywhere.has(key));
    return { key, name: camel(key), field, required };
  });
  let entry = inputTypes.get(name);
  if (!entry) {
    const ref = builder.inputType(name, {
      fields: (t: any) =>
        Object.fromEntries(
          fields.map(({ name: fieldName, field, required }) => [
            fieldName,
            t.field({
              type: field.type,
              required: Array.isArray(field.type) ? { list: required, items: true } : required,
            }),
          ]),
        ),
    } as any);
    entry = { schema, ref };
    inputTypes.set(name, entry);
  } else if (entry.schema !== schema) {
    throw new Error(`two catalog schemas want the GraphQL input type ${name}`);
  }
  return {
    type: entry.ref,
    decode(value) {
      if (value === null || value === undefined) return value;
      const source = value as Record<string, unknown>;
      const out: Record<string, unknown> = {};
      for (const { key, name: fieldName, field } of fields) {
        if (source[fieldName] !== undefined) out[key] = field.decode(source[fieldName]);
      }
      return out;
    },
  };
}

function inputFor(schema: z.ZodType, key: string, naming: Naming, item = false): InputShape {
  const def = defOf(schema);
  const scalar = scalarFor(def, key);
  if (scalar) return { type: scalar, decode: (v) => v };
  switch (def.type) {
    case 'enum':
      return {
        type: enumOf(naming(key, item).replace(/Input$/, ''), Object.values(def.entries ?? {})),
        decode: (v) => v,
      };
    case 'array': {
      const element = unwrap(def.element as z.ZodType).inner;
      const items = inputFor(element, key, naming, true);
      if (Array.isArray(items.type)) throw new Error(`nested lists are not mapped (${key})`);
      return {
        type: [items.type],
        decode: (v) => (Array.isArray(v) ? v.map((x) => items.decode(x)) : v),
      };
    }
    case 'object':
      return inputObject(naming(key, item), shapeOf(schema), null, nestedNaming(naming(key, item)), schema);
    case 'union': {
      const { shape, everywhere } = mergedShape(def.options ?? []);
      return inputObject(naming(key, item), shape, everywhere, nestedNaming(naming(key, item)), schema);
    }
    default:
      throw new Error(`no GraphQL input for zod type ${def.type} (${key})`);
  }
}

/** Names of nested input types: `GrantInput` → `GrantTargetInput`. */
function nestedNaming(parent: string): Naming {
  const base = parent.replace(/Input$/, '');
  return (key, item) => `${base}${pascal(item ? singular(key) : key)}Input`;
}

/**
 * The input type of an operation: path parameters, query parameters and body fields in one
 * object (nested types named by `overrides[key]` or after the operation). `split` returns the
 * parts `Domain.execute` takes.
 */
export function operationInput(
  name: string,
  parts: { params: z.ZodType; query: z.ZodType; body: z.ZodType | null },
  overrides: Record<string, string>,
) {
  const params = shapeOf(parts.params);
  const query = shapeOf(parts.query);
  const body = shapeOf(parts.body);
  const shape: Record<string, z.ZodType> = {};
  for (const part of [params, query, body]) {
    for (const [key, schema] of Object.entries(part)) {
      if (key in shape) throw new Error(`${name}: ${key} appears in two parts of the input`);
      shape[key] = schema;
    }
  }
  if (Object.keys(shape).length === 0) return null;
  const base = name.replace(/Input$/, '');
  const naming: Naming = (key, item) => overrides[key] ?? `${base}${pascal(item ? singular(key) : key)}Input`;
  const root = inputObject(name, shape, null, naming, parts.body ?? parts.query);
  const required = Object.values(shape).some((schema) => {
    const { optional, nullable } = unwrap(schema);
    return !optional && !nullable;
  });
  return {
    type: root.type,
    required,
    split(value: unknown) {
      const decoded = (root.decode(value ?? {}) ?? {}) as Record<string, unknown>;
      const pick = (keys: Record<string, unknown>) =>
        Object.fromEntries(Object.entries(decoded).filter(([key]) => key in keys));
      return { params: pick(params), query: pick(query), body: parts.body ? pick(body) : undefined };
    },
  };
}

// ---- outputs -------------------------------------------------------------------------------

/** Catalog resources with a hand-written GraphQL type. */
const RESOURCES = new Map<z.ZodType, any>([
  [workspaceSchema, WorkspaceRef],
  [namespaceSchema, NamespaceRef],
  [grantSchema, GrantRef],
  [memberSchema, MemberRef],
  [actorSchema, ActorRef],
  [evidenceSchema, EvidenceRef],
  [verificationSchema, VerificationRef],
  [memorySchema, MemoryRef],
  [revisionSchema, MemoryRevisionRef],
  [memoryViewSchema, MemoryViewRef],
  [memoryListItemSchema, MemoryListItemRef],
  [commitSchema, CommitRef],
  [memoryDeletionReceiptSchema, MemoryDeletionReceiptRef],
  [evidenceDeletionReceiptSchema, EvidenceDeletionReceiptRef],
  [installationSchema, InstallationRef],
  [credentialSchema, CredentialRef],
  [webhookSchema, WebhookRef],
]);

interface OutputShape {
  type: any;
  list: boolean;
  complexity?: { field: number; multiplier: number };
  /** Tag objects with the read's known_at so nested fields mask like `/v1`. */
  wrap(value: unknown, knownAt: number): unknown;
}

const wrapObject = (value: unknown, knownAt: number) =>
  value !== null && typeof value === 'object' ? at(value as object, knownAt) : value;

function outputFor(schema: z.ZodType, key: string, typeName: (item: boolean) => string, item = false): OutputShape {
  const resource = RESOURCES.get(schema);
  if (resource) return { type: resource, list: false, wrap: wrapObject };
  const def = defOf(schema);
  const scalar = scalarFor(def, key);
  if (scalar) return { type: scalar, list: false, wrap: (v) => v };
  switch (def.type) {
    case 'enum':
      return { type: enumOf(typeName(item), Object.values(def.entries ?? {})), list: false, wrap: (v) => v };
    case 'array': {
      const element = unwrap(def.element as z.ZodType).inner;
      const items = outputFor(element, key, typeName, true);
      if (items.list) throw new Error(`nested lists are not mapped (${key})`);
      return {
        type: items.type,
        list: true,
        complexity: boundedList(maxItems(def)),
        wrap: (v, knownAt) => (Array.isArray(v) ? v.map((x) => items.wrap(x, knownAt)) : v),
      };
    }
    case 'object':
      return { type: outputObject(typeName(item), shapeOf(schema), null), list: false, wrap: wrapObject };
    case 'union': {
      const { shape, everywhere } = mergedShape(def.options ?? []);
      return { type: outputObject(typeName(item), shape, everywhere), list: false, wrap: wrapObject };
    }
    default:
      throw new Error(`no GraphQL output for zod type ${def.type} (${key})`);
  }
}

const outputTypes = new Map<string, any>();

/** An object type for an answer the catalog defines inline (payloads, recall items, ...). */
export function outputObject(name: string, shape: Record<string, z.ZodType>, everywhere: Set<string> | null): any {
  const existing = outputTypes.get(name);
  if (existing) return existing;
  const base = name.replace(/Payload$/, '');
  const fields = Object.entries(shape).map(([key, fieldSchema]) => {
    const { inner, optional, nullable } = unwrap(fieldSchema);
    const shapeOfField = outputFor(inner, key, (item) => `${base}${pascal(item ? singular(key) : key)}`);
    return {
      key,
      shape: shapeOfField,
      nullable: optional || nullable || (everywhere !== null && !everywhere.has(key)),
    };
  });
  const ref = builder.objectRef<Record<string, unknown> & { $knownAt: number }>(name);
  ref.implement({
    fields: (t: any) =>
      Object.fromEntries(
        fields.map(({ key, shape: field, nullable }) => [
          camel(key),
          t.field({
            type: field.list ? [field.type] : field.type,
            nullable: field.list ? { list: nullable, items: false } : nullable,
            ...(field.complexity ? { complexity: field.complexity } : {}),
            resolve: (parent: Record<string, unknown> & { $knownAt: number }) => {
              const value = parent[key];
              return value === undefined || value === null ? null : field.wrap(value, parent.$knownAt);
            },
          }),
        ]),
      ),
  } as any);
  outputTypes.set(name, ref);
  return ref;
}

/** The payload type of an operation's answer (a union of objects is merged into one object). */
export function operationPayload(name: string, output: z.ZodType): any {
  const def = defOf(output);
  if (def.type === 'union') {
    const { shape, everywhere } = mergedShape(def.options ?? []);
    return outputObject(name, shape, everywhere);
  }
  return outputObject(name, shapeOf(output), null);
}
