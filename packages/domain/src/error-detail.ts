import { DomainError } from './errors';

/**
 * The one formatter of `invalid_input` details (decisions §7): `<place>: <reason>`, e.g.
 * `body.kind: expected one of claim, episode, procedure`, several of them `; `-separated. A
 * detail travels in the `X-Error-Detail` response header, so it is printable ASCII, at most
 * `MAX_DETAIL_LENGTH` characters, and quotes a client's own name only short and escaped.
 */

/** Details stay short enough for a header. */
export const MAX_DETAIL_LENGTH = 300;

/** Client names (an unknown field, a repeated parameter) are cut to this many characters. */
const MAX_QUOTED_NAME = 64;

/** The part of a request a detail points into. */
export type InputPart = 'params' | 'query' | 'body';

/** Printable ASCII, anything else (CR, LF, non-ASCII) as a `\uXXXX` escape. */
const asciiOnly = (text: string) =>
  text.replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** A client's name as a short JSON string: at most 64 characters, printable ASCII only. */
export function quoteName(name: string): string {
  const short = name.length > MAX_QUOTED_NAME ? `${name.slice(0, MAX_QUOTED_NAME)}...` : name;
  return asciiOnly(JSON.stringify(short));
}

/** A detail made safe for a header: printable ASCII, bounded. */
export function boundDetail(detail: string): string {
  const safe = asciiOnly(detail);
  return safe.length > MAX_DETAIL_LENGTH ? `${safe.slice(0, MAX_DETAIL_LENGTH - 3)}...` : safe;
}

/** `invalid_input` with a bounded detail. */
export function invalidInput(detail: string): DomainError {
  return new DomainError('invalid_input', boundDetail(detail));
}

/**
 * The detail a client may see for an error: what was wrong with an `invalid_input`, the limit a
 * `budget_exceeded` passed (the limits are public: this hints at nothing stored), and the holder
 * of a key a `conflict` names (decisions §7, §12); `not_found` and `forbidden` never hint at
 * whether something exists. Null for anything else.
 */
export function publicDetail(error: unknown): string | null {
  if (!(error instanceof DomainError)) return null;
  if (error.code === 'invalid_input') return boundDetail(error.detail ?? 'the request is invalid');
  if (error.code === 'budget_exceeded' && error.detail) return boundDetail(error.detail);
  return error.detailShown && error.detail ? boundDetail(error.detail) : null;
}

/**
 * The codes whose errors always carry a public detail (`publicDetail`); a `conflict` carries one
 * only when it names a key's holder.
 */
export const DETAILED_CODES: ReadonlySet<string> = new Set(['invalid_input', 'budget_exceeded']);

/** `budget_exceeded` for a request or response over a byte limit, stating it. */
export function overLimit(place: 'request' | 'response', what: string, limit: number): DomainError {
  return new DomainError('budget_exceeded', `${place}: ${what} is over the limit of ${limit} bytes`);
}

/**
 * Why a request is `unauthenticated` (an expired token, a wrong audience, an unknown or revoked
 * credential: the fixed texts of `AUTH_FAILURES`), or null when it carried no token at all
 * (RFC 6750 §3.1: then the challenge names no error). It travels in `WWW-Authenticate` and
 * `X-Error-Detail`; the body stays the exact error object.
 */
export function authFailureReason(error: unknown): string | null {
  if (!(error instanceof DomainError) || error.code !== 'unauthenticated' || !error.detail) return null;
  return boundDetail(error.detail);
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** `body.items[0].kind`; a key that is no short identifier is quoted (`body["a b"]`). */
export function fieldPath(part: string, path: readonly PropertyKey[]): string {
  let out = part;
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else if (typeof key === 'string' && IDENTIFIER.test(key) && key.length <= MAX_QUOTED_NAME) out += `.${key}`;
    else out += `[${quoteName(String(key))}]`;
  }
  return out;
}

/** The zod issue fields the formatter reads (zod 4's issue union, structurally). */
export interface SchemaIssue {
  code: string;
  path: readonly PropertyKey[];
  message: string;
  expected?: unknown;
  values?: readonly unknown[];
  /** A discriminated union's allowed discriminator values. */
  options?: readonly unknown[];
  keys?: readonly string[];
  origin?: string;
  minimum?: number | bigint;
  maximum?: number | bigint;
  inclusive?: boolean;
  format?: string;
  divisor?: number | bigint;
  errors?: readonly (readonly SchemaIssue[])[];
  issues?: readonly SchemaIssue[];
}

/** The JSON type of a value, as a client would name it. */
function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  // GraphQL lets a literal 1e309 through as Infinity.
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  return typeof value;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let current = root;
  for (const key of path) {
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, key)) return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

const showValue = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

/** What a size bound counts for a kind of value. */
function unitOf(origin: string | undefined, bound: number | bigint): string {
  const plural = bound === 1 || bound === 1n ? '' : 's';
  if (origin === 'string') return ` character${plural}`;
  if (origin === 'array' || origin === 'set') return ` item${plural}`;
  return '';
}

function boundReason(issue: SchemaIssue, direction: 'most' | 'least'): string {
  const bound = (direction === 'most' ? issue.maximum : issue.minimum) ?? 0;
  const verb = issue.origin === 'array' || issue.origin === 'set' ? 'must have' : 'must be';
  if (issue.inclusive === false) {
    const comparison = direction === 'most' ? 'less than' : 'more than';
    return `${verb} ${comparison} ${bound}${unitOf(issue.origin, bound)}`;
  }
  return `${verb} at ${direction} ${bound}${unitOf(issue.origin, bound)}`;
}

/** Of a union's branches, the one that got furthest (longest path), then with fewest issues. */
function closestBranch(branches: readonly (readonly SchemaIssue[])[]): readonly SchemaIssue[] | undefined {
  const depth = (issues: readonly SchemaIssue[]) => Math.max(0, ...issues.map((i) => i.path.length));
  let best: readonly SchemaIssue[] | undefined;
  for (const branch of branches) {
    if (branch.length === 0) continue;
    if (!best || depth(branch) > depth(best) || (depth(branch) === depth(best) && branch.length < best.length)) {
      best = branch;
    }
  }
  return best;
}

/**
 * The reason of one issue at its full path (a union's reason comes from its closest branch).
 * `keyNoun` names an object's keys: `parameter` at the top of a query, else `field`.
 */
function describeIssue(
  issue: SchemaIssue,
  path: readonly PropertyKey[],
  input: unknown,
  keyNoun: string,
): [PropertyKey[], string] {
  const here = [...path, ...issue.path];
  // A field that is absent is required, whatever it would have had to be (a type, a value of a set).
  const absentCodes = ['invalid_type', 'invalid_value', 'invalid_union'];
  if (absentCodes.includes(issue.code) && valueAt(input, here) === undefined) return [here, 'is required'];
  switch (issue.code) {
    case 'invalid_type': {
      const value = valueAt(input, here);
      return [here, `expected ${showValue(issue.expected)}, got ${jsonType(value)}`];
    }
    case 'invalid_value': {
      const values = (issue.values ?? []).map(showValue);
      return [here, values.length === 1 ? `expected ${values[0]}` : `expected one of ${values.join(', ')}`];
    }
    case 'unrecognized_keys': {
      const keys = issue.keys ?? [];
      const named = keys.slice(0, 3).map(quoteName).join(', ');
      const more = keys.length > 3 ? ` and ${keys.length - 3} more` : '';
      const noun = here.length === 0 ? keyNoun : 'field';
      return [here, `unknown ${noun}${keys.length === 1 ? '' : 's'} ${named}${more}`];
    }
    case 'too_big':
      return [here, boundReason(issue, 'most')];
    case 'too_small':
      return [here, boundReason(issue, 'least')];
    case 'invalid_format':
      return [here, issue.format === 'regex' ? 'has the wrong format' : `must be a valid ${issue.format}`];
    case 'not_multiple_of':
      return [here, `must be a multiple of ${issue.divisor}`];
    case 'invalid_union': {
      const branch = closestBranch(issue.errors ?? []);
      const first = branch?.[0];
      if (first) return describeIssue(first, here, input, keyNoun);
      if (issue.options?.length) return [here, `expected one of ${issue.options.map(showValue).join(', ')}`];
      return [here, 'matches none of the allowed shapes'];
    }
    case 'invalid_key':
    case 'invalid_element': {
      const first = issue.issues?.[0];
      if (first) return describeIssue(first, here, input, keyNoun);
      return [here, 'is invalid'];
    }
    default:
      // `custom`: a refinement of the catalog's own, whose message is ours (never client text).
      return [here, issue.message];
  }
}

/**
 * The detail for a part's schema issues: every issue at its field path, `; `-separated in the
 * order zod found them, as many whole as fit in `MAX_DETAIL_LENGTH`, then how many more there
 * were: `body.namespace_id: is required; body.kind: is required; body.text: is required`,
 * `query.limit: must be at most 100`, `body: unknown field "foo"`.
 */
export function describeIssues(part: InputPart, issues: readonly SchemaIssue[], input: unknown): string {
  if (issues.length === 0) return `${part}: is invalid`;
  const described = issues.map((issue) => {
    const [path, reason] = describeIssue(issue, [], input, part === 'query' ? 'parameter' : 'field');
    return boundDetail(`${fieldPath(part, path)}: ${reason}`);
  });
  let detail = described[0] as string;
  for (let listed = 1; listed < described.length; listed += 1) {
    const left = described.length - listed - 1;
    // Room is kept for the count of those that would not fit after this one.
    const more = left > 0 ? ` (and ${left} more)`.length : 0;
    const next = `${detail}; ${described[listed]}`;
    if (next.length + more > MAX_DETAIL_LENGTH) return boundDetail(`${detail} (and ${described.length - listed} more)`);
    detail = next;
  }
  return detail;
}
