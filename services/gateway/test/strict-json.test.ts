import { DomainError, decodeJsonBody, isJsonContentType, MAX_JSON_DEPTH, parseStrictJson } from '@tms/domain';
import { describe, expect, it } from 'vitest';
import { checkDocumentNesting, MAX_DOCUMENT_NESTING } from '../src/graphql/strict-request';

/** The detail of the `invalid_input` a decoding throws (fails the test if it does not throw one). */
function refusal(decode: () => unknown): string {
  try {
    decode();
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe('invalid_input');
    return (error as DomainError).detail ?? '';
  }
  throw new Error('expected invalid_input, but it decoded');
}

const bytes = (...parts: (string | number[])[]) =>
  Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part) : Buffer.from(part))));
const nested = (depth: number) => `${'['.repeat(depth)}1${']'.repeat(depth)}`;

describe('the strict JSON decoder', () => {
  it('accepts ordinary JSON and returns what JSON.parse returns', () => {
    const text = '{"a":[1,-2.5e3,"x\\"y\\\\",{"b":null,"c":true}],"d":{"a":1},"\\u00e9":"\\ud83d\\ude00"}';
    expect(parseStrictJson(text)).toEqual(JSON.parse(text));
    expect(decodeJsonBody('application/json; charset=UTF-8', bytes(text))).toEqual(JSON.parse(text));
    // The same key in sibling or nested objects is no duplicate.
    expect(parseStrictJson('[{"a":1},{"a":2,"b":{"a":3}}]')).toEqual([{ a: 1 }, { a: 2, b: { a: 3 } }]);
    // An escaped quote or backslash right before a closing quote, and an empty key.
    expect(parseStrictJson('{"\\\\":"\\\\","\\"":"","":0}')).toEqual({ '\\': '\\', '"': '', '': 0 });
  });

  it('refuses a duplicate key at any depth, spelled plainly or with escapes, naming where', () => {
    expect(refusal(() => parseStrictJson('{"kind":"claim","kind":"episode"}'))).toBe(
      'body: duplicate key "kind" at body',
    );
    expect(refusal(() => parseStrictJson('{"items":[{"kind":1,"kind":2}]}'))).toBe(
      'body: duplicate key "kind" at body.items[0]',
    );
    expect(refusal(() => parseStrictJson('{"a":[1,2,{"b":{"c":1,"\\u0063":2}}]}', 'variables'))).toBe(
      'variables: duplicate key "c" at variables.a[2].b',
    );
    expect(refusal(() => parseStrictJson('{"x y":{"k":1,"k":1}}'))).toBe('body: duplicate key "k" at body["x y"]');
    expect(refusal(() => parseStrictJson('{"__proto__":1,"__proto__":2}'))).toContain('duplicate key "__proto__"');
  });

  it('finds duplicates in large objects too, and forgets the keys of closed objects', () => {
    const keys = Array.from({ length: 40 }, (_, i) => `"k${i}":{"k${i}":1,"inner":[{"k1":1}]}`);
    expect(parseStrictJson(`{${keys.join(',')}}`)).toBeDefined();
    expect(refusal(() => parseStrictJson(`{${keys.join(',')},"k3":0}`))).toBe('body: duplicate key "k3" at body');
    expect(refusal(() => parseStrictJson(`{${keys.join(',')},"k39":0}`))).toBe('body: duplicate key "k39" at body');
    expect(refusal(() => parseStrictJson(`{"a":{${keys.join(',')},"k0":0}}`))).toBe(
      'body: duplicate key "k0" at body.a',
    );
  });

  it(`bounds nesting at ${MAX_JSON_DEPTH} levels, iteratively (100000 levels neither overflow nor pass)`, () => {
    expect(parseStrictJson(nested(MAX_JSON_DEPTH))).toBeDefined();
    expect(refusal(() => parseStrictJson(nested(MAX_JSON_DEPTH + 1)))).toMatch(
      new RegExp(`^body: nesting deeper than ${MAX_JSON_DEPTH} at body\\[0\\]`),
    );
    expect(refusal(() => parseStrictJson(nested(100_000)))).toContain('nesting deeper than');
    const deepObject = `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`;
    expect(refusal(() => parseStrictJson(deepObject))).toMatch(/^body: nesting deeper than 64 at body\.a\.a\.a/);
  });

  it('refuses unpaired surrogates, escaped or raw, and accepts a paired one', () => {
    expect(refusal(() => parseStrictJson('{"text":"a\\ud800b"}'))).toBe('body: unpaired surrogate at body.text');
    expect(refusal(() => parseStrictJson('["\\udc00"]'))).toBe('body: unpaired surrogate at body[0]');
    expect(refusal(() => parseStrictJson('{"\\ud800":1}'))).toBe('body: unpaired surrogate at body');
    expect(refusal(() => parseStrictJson('"\ud800"'))).toBe('body: unpaired surrogate');
    expect(parseStrictJson('"\\uD83D\\uDE00"')).toBe('😀');
  });

  it('refuses numbers that overflow to Infinity, and keeps large finite ones', () => {
    expect(parseStrictJson('[1e308,-1.7e308,0.1e-400]')).toEqual([1e308, -1.7e308, 0]);
    expect(refusal(() => parseStrictJson('{"valid_from":1e309}'))).toBe('body: number out of range at body.valid_from');
    expect(refusal(() => parseStrictJson('[0,-1E400]'))).toBe('body: number out of range at body[1]');
    expect(refusal(() => parseStrictJson(`${'9'.repeat(400)}`))).toBe('body: number out of range at body');
  });

  it('refuses bytes that are not UTF-8, and never yields U+FFFD', () => {
    const json = 'application/json';
    expect(refusal(() => decodeJsonBody(json, bytes('{"text":"', [0xff, 0xed, 0xa0, 0x80], '"}')))).toBe(
      'body: not UTF-8',
    );
    expect(refusal(() => decodeJsonBody(json, bytes('"', [0xc0, 0x80], '"')))).toBe('body: not UTF-8');
    expect(refusal(() => decodeJsonBody(json, bytes('"', [0xed, 0xa0, 0x80], '"')))).toBe('body: not UTF-8');
    // A byte order mark is not JSON.
    expect(refusal(() => decodeJsonBody(json, bytes([0xef, 0xbb, 0xbf], '{}')))).toBe('body: not JSON');
    expect(refusal(() => decodeJsonBody(json, bytes('{"a":1')))).toBe('body: not JSON');
    expect(refusal(() => decodeJsonBody(json, bytes('')))).toBe('body: not JSON');
  });

  it('takes application/json with charset utf-8 or none, and nothing else', () => {
    for (const ok of ['application/json', 'Application/JSON; charset=utf-8', 'application/json;charset="UTF-8"']) {
      expect(isJsonContentType(ok), ok).toBe(true);
    }
    for (const bad of [
      undefined,
      '',
      'application/json; charset=latin1',
      'application/json; charset=utf-16',
      'application/graphql',
      'application/x-www-form-urlencoded',
      'text/plain',
      'application/jsonx',
    ]) {
      expect(isJsonContentType(bad), String(bad)).toBe(false);
      expect(refusal(() => decodeJsonBody(bad, bytes('{}')))).toBe('body: content type must be application/json');
    }
  });

  it('keeps a detail short even for a long key', () => {
    const key = 'k'.repeat(10_000);
    const detail = refusal(() => parseStrictJson(`{"${key}":{"${key}":1,"${key}":2}}`));
    expect(detail.length).toBeLessThanOrEqual(300);
    // The path quotes a long key, cut like the key itself.
    expect(detail).toMatch(/^body: duplicate key "k{64}\.\.\." at body\["k{64}\.\.\."\]$/);
    // ASCII only (a detail will travel in a header): other characters as escapes.
    expect(refusal(() => parseStrictJson('{"é😀\\n":1,"é😀\\n":2}'))).toBe(
      'body: duplicate key "\\u00e9\\ud83d\\ude00\\n" at body',
    );
  });
});

describe('the GraphQL document nesting bound', () => {
  const deep = (n: number) => `${'['.repeat(n)}1${']'.repeat(n)}`;
  it(`refuses brackets nested past ${MAX_DOCUMENT_NESTING}, iteratively`, () => {
    // The selection set and the argument list count: 2 levels before the value.
    checkDocumentNesting(`{ f(a: ${deep(MAX_DOCUMENT_NESTING - 2)}) }`);
    expect(refusal(() => checkDocumentNesting(`{ f(a: ${deep(MAX_DOCUMENT_NESTING - 1)}) }`))).toBe(
      `query: nesting deeper than ${MAX_DOCUMENT_NESTING}`,
    );
    expect(refusal(() => checkDocumentNesting(`{ f(a: ${deep(100_000)}) }`))).toContain('nesting deeper');
    expect(refusal(() => checkDocumentNesting('{'.repeat(100_000)))).toContain('nesting deeper');
  });

  it('ignores brackets in strings, block strings and comments', () => {
    const many = '[{('.repeat(200);
    checkDocumentNesting(`# ${many}\n{ f(a: "${many}\\"${many}", b: """${many}\\"""${many}""") }`);
    checkDocumentNesting(`{ f(a: "\\\\") # ${many}\r g(b: """x\\""" """) }`);
    // An unterminated string or block string is left to the parser.
    checkDocumentNesting(`{ f(a: "${many}`);
    checkDocumentNesting(`{ f(a: """${many}`);
  });
});
