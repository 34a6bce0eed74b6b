import fc from 'fast-check';

/*
 * fast-check arbitraries generated from JSON Schema (the catalog's zod schemas through
 * `z.toJSONSchema`), valid values and their mutations, and a payload form that can carry raw
 * JSON text and raw bytes JSON.stringify cannot produce (1e309, duplicate keys, deep nesting,
 * invalid UTF-8).
 */

export type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMaximum?: number;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  default?: unknown;
};

/** Ids and hashes of the fixture, so that generated requests can reach real rows. */
export interface Pools {
  ids: string[];
  workspaceIds: string[];
  sha256: string[];
}

/**
 * A value whose JSON text may hold raw pieces: wherever JSON.stringify writes the string
 * `"@@Rn@@"` (as a value or a key), the bytes `raws[n]` go instead.
 */
export interface Payload {
  value: unknown;
  raws: Buffer[];
  /** What was done to the valid value (for the counterexample). */
  mutation: string;
}

const SENTINEL = /"@@R(\d+)@@"/g;
const sentinel = (index: number) => `@@R${index}@@`;

export function serialize(payload: Payload): Buffer {
  const text = JSON.stringify(payload.value) ?? '';
  const pieces: Buffer[] = [];
  let last = 0;
  for (const match of text.matchAll(SENTINEL)) {
    pieces.push(Buffer.from(text.slice(last, match.index), 'utf8'));
    pieces.push(payload.raws[Number(match[1])] ?? Buffer.alloc(0));
    last = (match.index ?? 0) + match[0].length;
  }
  pieces.push(Buffer.from(text.slice(last), 'utf8'));
  return Buffer.concat(pieces);
}

/** Set an own property, `__proto__` included (plain assignment would set the prototype). */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

const isIdKey = (key: string) => key === 'id' || key.endsWith('_id') || key.endsWith('_ids');
const isShaKey = (key: string) => key.includes('sha256');

/** The workspace-id pattern is in an `allOf` of the id schema. */
function patternsOf(schema: JsonSchema): string[] {
  return [schema.pattern, ...(schema.allOf ?? []).flatMap(patternsOf)].filter((p): p is string => p !== undefined);
}

function typeOf(schema: JsonSchema): string | undefined {
  if (Array.isArray(schema.type)) return schema.type[0];
  if (schema.type) return schema.type;
  if (schema.enum) return typeof schema.enum[0];
  if (schema.const !== undefined) return typeof schema.const;
  return undefined;
}

// ---- valid values --------------------------------------------------------------------------

/** A value the schema accepts (ids and hashes mostly from the fixture's). */
export function validFor(schema: JsonSchema, key: string, pools: Pools): fc.Arbitrary<unknown> {
  const options = schema.anyOf ?? schema.oneOf;
  if (options) return fc.oneof(...options.map((option) => validFor(option, key, pools)));
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  switch (typeOf(schema)) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer': {
      const min = schema.minimum ?? -(2 ** 31);
      // Small values: a valid `wait_ms` of 10000 would make the run wait for nothing;
      // the bounds themselves are fuzzed by `invalidFor`.
      return fc.integer({ min, max: Math.min(schema.maximum ?? 2 ** 31, min + 64) });
    }
    case 'number': {
      // Times (the only numbers clients send) are bounded to the years 0001-9999: stay inside.
      const min = schema.minimum ?? -Number.MAX_VALUE;
      const below = schema.exclusiveMaximum ?? schema.maximum ?? Number.MAX_VALUE;
      const inside = (n: number) => n >= min && (schema.exclusiveMaximum === undefined ? n <= below : n < below);
      const max = schema.exclusiveMaximum === undefined ? below : below - 2 ** -15;
      return fc.oneof(
        fc.integer({ min: 0, max: 2_000_000_000 }),
        fc.double({ min, max, noNaN: true, noDefaultInfinity: true }),
        fc.constantFrom(...[0, -0, 0.1, -1.5, 253402300799, -62135596800, 1e15, -1e15, 2 ** 53 - 1].filter(inside)),
      );
    }
    case 'string':
      return stringFor(schema, key, pools);
    case 'array': {
      const item = validFor(schema.items ?? {}, key, pools);
      const minLength = schema.minItems ?? 0;
      const maxLength = Math.min(schema.maxItems ?? 4, minLength + 3);
      return schema.uniqueItems
        ? fc.uniqueArray(item, { minLength, maxLength, selector: (v) => JSON.stringify(v) })
        : fc.array(item, { minLength, maxLength });
    }
    case 'object':
      return objectFor(schema, pools, null);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

function stringFor(schema: JsonSchema, key: string, pools: Pools): fc.Arbitrary<string> {
  const patterns = patternsOf(schema);
  if (patterns.some((p) => p.includes('ws_'))) {
    return fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(...pools.workspaceIds) },
      fc.stringMatching(/^ws_[a-z0-9]{1,20}$/),
    );
  }
  if (isShaKey(key) || patterns.some((p) => p.includes('a-f0-9]{64}'))) {
    return fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...pools.sha256) }, fc.stringMatching(/^[a-f0-9]{64}$/));
  }
  if (isIdKey(key) && patterns.length > 0) {
    return fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(...pools.ids) },
      fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,40}$/),
    );
  }
  if (patterns.length > 0) {
    const [first] = patterns;
    return fc.stringMatching(new RegExp(first ?? '.*')).filter((s) => s.length >= (schema.minLength ?? 0));
  }
  const minLength = schema.minLength ?? 0;
  return fc.string({ unit: 'binary', minLength, maxLength: Math.min(schema.maxLength ?? 64, minLength + 64) });
}

/** An object of the schema; with `invalidKey`, that one property (by index) gets an invalid value. */
function objectFor(schema: JsonSchema, pools: Pools, invalidKey: number | null): fc.Arbitrary<Record<string, unknown>> {
  const properties = Object.entries(schema.properties ?? {});
  const required = new Set(schema.required ?? []);
  const broken = invalidKey === null || properties.length === 0 ? null : invalidKey % properties.length;
  const fields: Record<string, fc.Arbitrary<unknown>> = {};
  const requiredKeys: string[] = [];
  properties.forEach(([name, property], index) => {
    if (index === broken) {
      fields[name] = invalidFor(property, name, pools);
      requiredKeys.push(name);
    } else {
      fields[name] = validFor(property, name, pools);
      if (required.has(name)) requiredKeys.push(name);
    }
  });
  return fc.record(fields, { requiredKeys });
}

// ---- invalid values ------------------------------------------------------------------------

const HUGE_NUMBERS = [2 ** 53 + 1, -(2 ** 53 + 1), 1e308, -1e308, Number.MAX_VALUE, 5e-324, -0, -1, 1e21, 0.5];

/** A value the schema refuses, chosen from what the schema says (bounds, pattern, type). */
export function invalidFor(schema: JsonSchema, key: string, pools: Pools): fc.Arbitrary<unknown> {
  const choices: fc.Arbitrary<unknown>[] = [wrongTypeFor(schema)];
  const options = schema.anyOf ?? schema.oneOf;
  if (options) {
    const objects = options.filter((o) => typeOf(o) === 'object');
    if (objects.length > 0) choices.push(...objects.map((o) => invalidFor(o, key, pools)));
    return fc.oneof(...choices);
  }
  if (schema.enum) choices.push(fc.constantFrom('', 'CLAIM', 'unknown', `${String(schema.enum[0])} `));
  switch (typeOf(schema)) {
    case 'integer':
    case 'number': {
      const bounds: number[] = [];
      if (schema.minimum !== undefined) bounds.push(schema.minimum - 1, schema.minimum - 0.5);
      if (schema.maximum !== undefined) bounds.push(schema.maximum + 1);
      if (schema.exclusiveMaximum !== undefined) bounds.push(schema.exclusiveMaximum, 1_700_000_000_000); // the limit; a time in milliseconds
      if (typeOf(schema) === 'integer') bounds.push(1.5, 2 ** 53 + 1);
      choices.push(fc.constantFrom(...bounds, ...HUGE_NUMBERS));
      break;
    }
    case 'string': {
      const min = schema.minLength ?? 0;
      if (min > 0) choices.push(fc.constant('a'.repeat(min - 1)));
      // One code point over the bound (capped: the body must stay under the request cap).
      if (schema.maxLength !== undefined && schema.maxLength < 100_000)
        choices.push(fc.constantFrom('x'.repeat(schema.maxLength + 1), '😀'.repeat(schema.maxLength + 1)));
      choices.push(fc.constantFrom('\uD800', 'a\uDC00b', 'x\uD83D', '\u0000', ' ', 'a b', '../x', 'é'));
      if (isIdKey(key)) choices.push(fc.constantFrom('mem_0000', 'ws_missing', 'ns_', '-x', 'x'.repeat(201)));
      break;
    }
    case 'array': {
      const item = validFor(schema.items ?? {}, key, pools);
      if (schema.maxItems !== undefined && schema.maxItems <= 100)
        choices.push(
          fc.uniqueArray(fc.stringMatching(/^[a-z0-9]{8}$/), {
            minLength: schema.maxItems + 1,
            maxLength: schema.maxItems + 1,
          }),
        );
      if ((schema.minItems ?? 0) > 0) choices.push(fc.constant([]));
      if (schema.uniqueItems) choices.push(item.map((v) => [v, v]));
      choices.push(fc.array(invalidFor(schema.items ?? {}, key, pools), { minLength: 1, maxLength: 2 }));
      break;
    }
    case 'object': {
      const properties = Object.keys(schema.properties ?? {});
      if (properties.length > 0) {
        choices.push(fc.nat().chain((index) => objectFor(schema, pools, index)));
      }
      if ((schema.required ?? []).length > 0) choices.push(fc.constant({}));
      break;
    }
  }
  return fc.oneof(...choices);
}

function wrongTypeFor(schema: JsonSchema): fc.Arbitrary<unknown> {
  const type = typeOf(schema);
  const all: unknown[] = ['1', 1, true, null, [], {}, [1], { a: 1 }, 'true', '', 1.5];
  return fc.constantFrom(
    ...all.filter((v) => {
      if (v === null) return !(schema.anyOf ?? []).some((o) => o.type === 'null');
      if (Array.isArray(v)) return type !== 'array';
      if (typeof v === 'object') return type !== 'object';
      if (typeof v === 'number') return type !== 'number' && !(type === 'integer' && Number.isInteger(v));
      return typeof v !== type;
    }),
  );
}

// ---- mutations -----------------------------------------------------------------------------

/** Keys that name members of Object.prototype (a lookup that is not own-property finds them). */
export const PROTOTYPE_KEYS = [
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  'valueOf',
  'isPrototypeOf',
  '__defineGetter__',
  'prototype',
];

const ODD_KEYS = [...PROTOTYPE_KEYS, 'unknown_field', '', 'a\u0000b', '\uD800', 'ID', 'id '];

/** Byte sequences that are not UTF-8 (overlong, surrogate, truncated, out of range, stray). */
export const BAD_UTF8: number[][] = [
  [0xff],
  [0xc0, 0x80],
  [0xed, 0xa0, 0x80],
  [0xed, 0xbf, 0xbf],
  [0xf8, 0x88, 0x80, 0x80, 0x80],
  [0xe2, 0x82],
  [0x80],
  [0xf4, 0x90, 0x80, 0x80],
  [0xfe, 0xff],
  [0xe9],
];

/** Raw JSON texts that JSON.stringify never writes. */
function rawValues(): fc.Arbitrary<Buffer> {
  return fc
    .oneof(
      fc.constantFrom(
        '1e309',
        '-1e309',
        '1E400',
        '-0',
        '-0.0',
        '9007199254740993',
        '1e-400',
        '123456789012345678901234567890',
        '"\\uD800"',
        '"a\\uDC00"',
        '"\\u0000"',
        'NaN',
        'Infinity',
        "'x'",
        '01',
        '.5',
        '"\\x41"',
      ),
      deepNesting(),
      fc
        .constantFrom(...BAD_UTF8)
        .map((bytes) => Buffer.concat([Buffer.from('"ab'), Buffer.from(bytes), Buffer.from('c"')])),
    )
    .map((raw) => (typeof raw === 'string' ? Buffer.from(raw) : raw));
}

/** JSON nested 1,000 to 100,000 levels deep, always under the 262,144-byte request cap. */
export function deepNesting(): fc.Arbitrary<string> {
  return fc
    .tuple(fc.constantFrom(1_000, 10_000, 50_000, 100_000), fc.constantFrom('array', 'object', 'mixed'))
    .map(([depth, shape]) => {
      if (shape === 'array') return `${'['.repeat(depth)}${']'.repeat(depth)}`;
      const levels = Math.min(depth, 40_000);
      if (shape === 'object') return `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
      return `${'[{"a":'.repeat(levels / 2)}1${'}]'.repeat(levels / 2)}`;
    });
}

/** Every path (list of keys) to a value inside `value`, the root included. */
function pathsOf(value: unknown, prefix: string[] = []): string[][] {
  const out = [prefix];
  if (value !== null && typeof value === 'object') {
    for (const key of Object.keys(value))
      out.push(...pathsOf((value as Record<string, unknown>)[key], [...prefix, key]));
  }
  return out;
}

function getAt(value: unknown, path: string[]): unknown {
  let current = value;
  for (const key of path) current = (current as Record<string, unknown>)[key];
  return current;
}

function setAt(root: unknown, path: string[], next: unknown): unknown {
  if (path.length === 0) return next;
  const parent = getAt(root, path.slice(0, -1)) as Record<string, unknown>;
  setOwn(parent, path[path.length - 1] as string, next);
  return root;
}

/** A JSON clone (own `__proto__` keys survive JSON.parse). */
const clone = (value: unknown): unknown => (value === undefined ? undefined : JSON.parse(JSON.stringify(value)));

type Mutation =
  | { kind: 'replace'; at: number; with: unknown }
  | { kind: 'replace_raw'; at: number; raw: Buffer }
  | { kind: 'remove'; at: number }
  | { kind: 'add_key'; at: number; key: string; value: unknown }
  | { kind: 'duplicate_key'; at: number; value: unknown }
  | { kind: 'bad_bytes_in_string'; at: number; bytes: number[] };

const hostileValues = fc.constantFrom<unknown>(
  ...HUGE_NUMBERS,
  '',
  '\u0000',
  'a\u0000b',
  '\uD800',
  'x\uDFFF',
  '😀',
  '__proto__',
  null,
  true,
  [],
  {},
  [[[]]],
  { __x: 1 },
  'x'.repeat(70_000),
);

const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('replace' as const), at: fc.nat(), with: hostileValues }),
  fc.record({ kind: fc.constant('replace_raw' as const), at: fc.nat(), raw: rawValues() }),
  fc.record({ kind: fc.constant('remove' as const), at: fc.nat() }),
  fc.record({
    kind: fc.constant('add_key' as const),
    at: fc.nat(),
    key: fc.constantFrom(...ODD_KEYS),
    value: fc.oneof(hostileValues, fc.jsonValue({ maxDepth: 1 })),
  }),
  fc.record({
    kind: fc.constant('duplicate_key' as const),
    at: fc.nat(),
    value: fc.oneof(hostileValues, fc.jsonValue({ maxDepth: 1 })),
  }),
  fc.record({ kind: fc.constant('bad_bytes_in_string' as const), at: fc.nat(), bytes: fc.constantFrom(...BAD_UTF8) }),
);

function applyMutation(valid: unknown, mutation: Mutation): Payload {
  const value = clone(valid);
  const raws: Buffer[] = [];
  const raw = (bytes: Buffer) => {
    raws.push(bytes);
    return sentinel(raws.length - 1);
  };
  const paths = pathsOf(value);
  const pick = (filter: (v: unknown, p: string[]) => boolean) => {
    const candidates = paths.filter((p) => filter(getAt(value, p), p));
    return candidates.length === 0 ? null : (candidates[mutation.at % candidates.length] as string[]);
  };
  const isObject = (v: unknown) => v !== null && typeof v === 'object' && !Array.isArray(v);
  switch (mutation.kind) {
    case 'replace': {
      const path = pick(() => true) ?? [];
      return { value: setAt(value, path, mutation.with), raws, mutation: `replace ${show(path)}` };
    }
    case 'replace_raw': {
      const path = pick(() => true) ?? [];
      return { value: setAt(value, path, raw(mutation.raw)), raws, mutation: `raw at ${show(path)}` };
    }
    case 'remove': {
      const path = pick((_v, p) => p.length > 0);
      if (!path) return { value, raws, mutation: 'remove (nothing)' };
      const parent = getAt(value, path.slice(0, -1)) as Record<string, unknown>;
      if (Array.isArray(parent)) parent.splice(Number(path[path.length - 1]), 1);
      else delete parent[path[path.length - 1] as string];
      return { value, raws, mutation: `remove ${show(path)}` };
    }
    case 'add_key': {
      const path = pick(isObject) ?? [];
      const target = getAt(value, path);
      if (!isObject(target)) return { value, raws, mutation: 'add key (no object)' };
      setOwn(target as Record<string, unknown>, mutation.key, mutation.value);
      return { value, raws, mutation: `add key ${JSON.stringify(mutation.key)} at ${show(path)}` };
    }
    case 'duplicate_key': {
      const path = pick((v) => isObject(v) && Object.keys(v as object).length > 0);
      if (!path) return { value, raws, mutation: 'duplicate key (no object)' };
      const target = getAt(value, path) as Record<string, unknown>;
      const keys = Object.keys(target);
      const key = keys[mutation.at % keys.length] as string;
      // The duplicate goes first, so a decoder keeping the last value keeps the valid one.
      const rebuilt: Record<string, unknown> = {};
      setOwn(rebuilt, raw(Buffer.from(JSON.stringify(key))), mutation.value);
      for (const k of keys) setOwn(rebuilt, k, target[k]);
      return {
        value: setAt(value, path, rebuilt),
        raws,
        mutation: `duplicate key ${JSON.stringify(key)} at ${show(path)}`,
      };
    }
    case 'bad_bytes_in_string': {
      const path = pick((v) => typeof v === 'string');
      const bad = Buffer.from(mutation.bytes);
      if (!path)
        return {
          value: setAt(value, [], raw(Buffer.concat([Buffer.from('"'), bad, Buffer.from('"')]))),
          raws,
          mutation: 'bad bytes as the body',
        };
      const text = JSON.stringify(getAt(value, path) as string);
      const bytes = Buffer.concat([Buffer.from(text.slice(0, -1)), bad, Buffer.from('"')]);
      return {
        value: setAt(value, path, raw(bytes)),
        raws,
        mutation: `bad UTF-8 ${bad.toString('hex')} in ${show(path)}`,
      };
    }
  }
}

const show = (path: string[]) => (path.length === 0 ? '(root)' : path.map((k) => JSON.stringify(k)).join('.'));

/** Whole bodies that are not the operation's JSON at all. */
export function wholeBody(): fc.Arbitrary<Payload> {
  const texts = fc.oneof(
    fc.constantFrom(
      '',
      ' ',
      'null',
      '[]',
      '"x"',
      '1',
      'true',
      '{',
      '{"a":}',
      '{"a":1,}',
      '{"a":1}x',
      '{} {}',
      '/*c*/{}',
      "{'a':1}",
      '\uFEFF{}',
      '{"a":1e309}',
      '[1,2',
      '{"__proto__":{"x":1}}',
      '{"constructor":{"prototype":{}}}',
    ),
    deepNesting(),
    fc.string({ unit: 'binary', maxLength: 40 }),
  );
  return fc.oneof(
    texts.map((text) => ({ value: sentinel(0), raws: [Buffer.from(text, 'utf8')], mutation: 'whole body' })),
    fc
      .uint8Array({ minLength: 1, maxLength: 40 })
      .map((bytes) => ({ value: sentinel(0), raws: [Buffer.from(bytes)], mutation: 'random bytes' })),
  );
}

/**
 * A payload for a JSON object of `schema`: valid, with one property invalid for its schema,
 * mutated (hostile values, raw JSON text, removed or added keys, duplicate keys, bad bytes),
 * or (when `wholeBodies`) not the object at all.
 */
export function payloadFor(
  schema: JsonSchema,
  pools: Pools,
  wholeBodies = true,
  /** How the transport carries the valid object (applied before mutating, so keys match). */
  reshape: (value: Record<string, unknown>) => unknown = (value) => value,
): fc.Arbitrary<Payload> {
  const valid = objectFor(schema, pools, null).map(reshape);
  const variants: fc.WeightedArbitrary<Payload>[] = [
    { weight: 2, arbitrary: valid.map((value) => ({ value, raws: [], mutation: 'none' })) },
    {
      weight: 3,
      arbitrary: fc
        .nat()
        .chain((index) => objectFor(schema, pools, index))
        .map((value) => ({ value: reshape(value), raws: [], mutation: 'one property invalid for its schema' })),
    },
    { weight: 5, arbitrary: fc.tuple(valid, mutationArb).map(([v, m]) => applyMutation(v, m)) },
  ];
  if (wholeBodies) variants.push({ weight: 1, arbitrary: wholeBody() });
  return fc.oneof(...variants);
}

/** Apply one more mutation to a payload's value (its raws are kept). */
export function nest(payload: Payload, wrap: (value: unknown) => unknown): Payload {
  return { ...payload, value: wrap(payload.value) };
}

// ---- rendering -----------------------------------------------------------------------------

/** Bytes as readable text: UTF-8 kept, invalid bytes as \xNN, long runs of one character counted. */
export function describeBytes(bytes: Buffer, limit = 1500): string {
  let out = '';
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i] as number;
    const width =
      b < 0x80 ? 1 : b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
    const chunk = width === 0 ? null : bytes.subarray(i, i + width);
    let decoded: string | null = null;
    if (chunk && chunk.length === width) {
      try {
        decoded = new TextDecoder('utf-8', { fatal: true }).decode(chunk);
      } catch {
        decoded = null;
      }
    }
    if (decoded === null) {
      out += `\\x${b.toString(16).padStart(2, '0').toUpperCase()}`;
      i += 1;
    } else {
      out += decoded === '\u0000' ? '\\u0000' : decoded;
      i += width;
    }
  }
  const compressed = out.replace(
    /(.{1,6}?)\1{19,}/gsu,
    (run, unit: string) => `⟨${JSON.stringify(unit)} × ${run.length / unit.length}⟩`,
  );
  return compressed.length > limit
    ? `${compressed.slice(0, limit / 2)} …(${compressed.length} chars)… ${compressed.slice(-limit / 2)}`
    : compressed;
}
