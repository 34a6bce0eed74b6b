import { OPERATIONS_BY_NAME } from '@tms/catalog';
import { describe, expect, it } from 'vitest';
import { boundDetail, describeIssues, type InputPart, publicDetail, quoteName } from '../src/error-detail';
import { DomainError } from '../src/errors';

/** The detail the domain gives for an operation's part that fails its catalog schema. */
function detailFor(operation: string, part: InputPart, value: unknown): string {
  const spec = OPERATIONS_BY_NAME.get(operation);
  if (!spec) throw new Error(`no operation ${operation}`);
  const schema = part === 'body' ? spec.input.body : spec.input[part];
  if (!schema) throw new Error(`${operation} has no ${part}`);
  const parsed = schema.safeParse(value);
  if (parsed.success) throw new Error(`${operation} ${part} unexpectedly valid`);
  return describeIssues(part, parsed.error.issues, value);
}

const target = (t: object) => ({ grants: [{ target: t, capabilities: ['read'], inherit: true }] });

describe('invalid_input details', () => {
  it('name the field path and the reason, from the catalog schemas', () => {
    expect(detailFor('namespaces.grants.put', 'body', target({ kind: 'robot', actor_id: 'a' }))).toBe(
      'body.grants[0].target.kind: expected one of actor, installation, credential',
    );
    expect(detailFor('namespaces.grants.put', 'body', target({ kind: 'actor' }))).toBe(
      'body.grants[0].target.actor_id: is required',
    );
    expect(
      detailFor('credentials.create', 'body', { kind: 'service_key', name: 'x', capabilities: ['read', 'read'] }),
    ).toBe('body.capabilities: duplicate items');
    expect(detailFor('memories.list', 'query', { namespace_id: 'ns_1', limit: 500 })).toBe(
      'query.limit: must be at most 100',
    );
    expect(detailFor('memories.list', 'query', {})).toBe('query.namespace_id: is required');
    expect(detailFor('memories.create', 'body', { namespace_id: 'ns_1', kind: 'claim', text: 7, valid_from: 0 })).toBe(
      'body.text: expected string, got number',
    );
    // Several problems: every one, in the order zod found them; an absent enum is required too.
    expect(detailFor('memories.create', 'body', {})).toBe(
      'body.namespace_id: is required; body.kind: is required; body.text: is required; body.valid_from: is required',
    );
    expect(detailFor('memories.create', 'body', { namespace_id: 'ns_1', kind: 'fact', text: 7 })).toBe(
      'body.kind: expected one of claim, episode, procedure; body.text: expected string, got number; body.valid_from: is required',
    );
    expect(detailFor('namespaces.create', 'body', { parent_id: null, name: 'x', 'a b': 1 })).toBe(
      'body: unknown field "a b"',
    );
  });

  it('are printable ASCII and bounded, quoting client names short', () => {
    expect(quoteName('é\r\n"x"')).toBe('"\\u00e9\\r\\n\\"x\\""');
    expect(quoteName('k'.repeat(1000))).toBe(`"${'k'.repeat(64)}..."`);
    const long = boundDetail(`body: ${'\u00e9'.repeat(1000)}`);
    expect(long).toHaveLength(300);
    expect(long).toMatch(/^[\x20-\x7e]+\.\.\.$/);
    const many = detailFor(
      'namespaces.create',
      'body',
      Object.fromEntries([['parent_id', null], ['name', 'x'], ...Array.from({ length: 50 }, (_, i) => [`f${i}`, 1])]),
    );
    expect(many).toBe('body: unknown fields "f0", "f1", "f2" and 47 more');
  });

  it('list as many problems as fit in 300 characters, then how many more there were', () => {
    // Every problem is a bad item of a list of 100: each one named until the bound.
    const issues = Array.from({ length: 100 }, (_, i) => ({
      code: 'invalid_type',
      path: ['evidence_ids', i],
      message: 'x',
      expected: 'string',
    }));
    const input = { evidence_ids: Array.from({ length: 100 }, () => 7) };
    const detail = describeIssues('body', issues, input);
    expect(detail.length).toBeLessThanOrEqual(300);
    const match = /^(.*) \(and (\d+) more\)$/.exec(detail);
    const listed = match?.[1]?.split('; ') ?? [];
    expect(listed[0]).toBe('body.evidence_ids[0]: expected string, got number');
    expect(listed).toEqual(listed.map((_, i) => `body.evidence_ids[${i}]: expected string, got number`));
    // Nothing is lost: the listed and the counted make up all 100, and one more would not fit.
    expect(listed.length + Number(match?.[2])).toBe(100);
    expect(
      `${match?.[1]}; body.evidence_ids[${listed.length}]: expected string, got number (and ${99 - listed.length} more)`
        .length,
    ).toBeGreaterThan(300);
  });

  it('are public for invalid_input, and for budget_exceeded (the limit it passed), only', () => {
    expect(publicDetail(new DomainError('invalid_input', 'body.kind: expected one of a, b'))).toBe(
      'body.kind: expected one of a, b',
    );
    expect(
      publicDetail(new DomainError('budget_exceeded', 'request: the body is over the limit of 262144 bytes')),
    ).toBe('request: the body is over the limit of 262144 bytes');
    expect(publicDetail(new DomainError('not_found', 'no such namespace'))).toBeNull();
    expect(publicDetail(new DomainError('forbidden', 'workspace admins only'))).toBeNull();
    expect(publicDetail(new Error('invalid_input: boom'))).toBeNull();
  });
});
