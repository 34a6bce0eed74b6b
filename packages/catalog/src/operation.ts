import type { z } from 'zod';
import type { Capability } from './primitives';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type Scope = `svc:${Capability}`;

/**
 * Where an operation's workspace comes from:
 * - `directory`: none is needed (the caller is authenticated by issuer and subject only);
 * - `selected`: the `X-Service-Workspace` header (or the credential's bound workspace);
 * - `path`: the `{id}` path parameter names the workspace itself.
 */
export type WorkspaceSource = 'directory' | 'selected' | 'path';

/**
 * What the caller must hold on the addressed namespace, or `workspace_admin` for the
 * workspace itself, or null when any authenticated caller may call.
 */
export type RequiredCapability = Capability | 'workspace_admin' | null;

// biome-ignore lint/suspicious/noExplicitAny: the catalog holds operations of every shape.
type AnyObject = z.ZodObject<any>;

export interface OperationSpec<
  Name extends string = string,
  Params extends AnyObject = AnyObject,
  Query extends AnyObject = AnyObject,
  Body extends AnyObject | null = AnyObject | null,
  Output extends z.ZodType = z.ZodType,
> {
  name: Name;
  summary: string;
  method: HttpMethod;
  /** OpenAPI-style template, `{id}` for path parameters. */
  path: string;
  tool: string;
  scope: Scope | null;
  capability: RequiredCapability;
  /** Whether an `Idempotency-Key` is required and the result replayed. */
  idempotent: boolean;
  workspace: WorkspaceSource;
  /** Items per response: 100 for lists and grants, 1 otherwise. */
  maxItems: number;
  /** Whether the operation writes (and so returns a commit). */
  mutates: boolean;
  /**
   * The answer carries a top-level `secret` shown once: the stored idempotent answer keeps
   * `secret: null`, so neither the database nor a replay ever holds it.
   */
  revealsSecret?: boolean;
  input: { params: Params; query: Query; body: Body };
  output: Output;
}

export function defineOperation<
  const Name extends string,
  Params extends AnyObject,
  Query extends AnyObject,
  Body extends AnyObject | null,
  Output extends z.ZodType,
>(spec: OperationSpec<Name, Params, Query, Body, Output>) {
  return spec;
}

/** The single flat input a transport hands to the domain: path, query and body fields merged. */
export type OperationInput<Op extends OperationSpec> = z.output<Op['input']['params']> &
  z.output<Op['input']['query']> &
  (Op['input']['body'] extends AnyObject ? z.output<Op['input']['body']> : Record<never, never>);

export type OperationOutput<Op extends OperationSpec> = z.output<Op['output']>;
