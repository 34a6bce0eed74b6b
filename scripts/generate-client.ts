import type { Json, JsonObject } from '../packages/catalog/src/openapi';

/**
 * Writes packages/client/src/generated.ts from the OpenAPI document alone: TypeScript types of
 * every component, input and output, the operation table the runtime dispatches on, and the
 * nested method signatures. Nothing here names an operation, so a regenerated catalog is all a
 * new operation needs.
 */

export const CLIENT_GENERATED_PATH = 'packages/client/src/generated.ts';

export const COMPONENT_PREFIX = '#/components/schemas/';
const PARAMETER_PREFIX = '#/components/parameters/';
const WORKSPACE_HEADER = 'X-Service-Workspace';
const IDEMPOTENCY_HEADER = 'Idempotency-Key';

export interface Parameter {
  name: string;
  in: string;
  required: boolean;
  schema: JsonObject;
  description?: string;
}

export interface Pager {
  /** Query parameter carrying the position to continue from. */
  param: string;
  /** Output property holding the position of the next page (null or unchanged at the end). */
  next: string;
  /** Output property holding the page's items. */
  items: string;
}

export interface OperationModel {
  name: string;
  typeName: string;
  method: string;
  path: string;
  summary: string;
  description: string;
  pathParams: Parameter[];
  queryParams: Parameter[];
  body: JsonObject | null;
  output: JsonObject;
  idempotent: boolean;
  mutates: boolean;
  workspace: boolean;
  errors: string[];
  pager: Pager | null;
}

export function asObject(value: Json | undefined, what: string): JsonObject {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error(`${what} is not an object`);
  return value;
}

export function pascal(name: string): string {
  return name
    .split(/[._-]/)
    .filter((part) => part.length > 0)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}

function quoteKey(key: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? key : JSON.stringify(key);
}

function docComment(text: unknown, indent: string): string {
  if (typeof text !== 'string' || text.length === 0) return '';
  return `${indent}/** ${text.replace(/\*\//g, '*\\/').replace(/\n/g, ' ')} */\n`;
}

/** A JSON Schema (as the catalog emits it) as a TypeScript type expression. */
export function typeOfSchema(schema: Json | undefined, indent = ''): string {
  if (schema === undefined || schema === true) return 'unknown';
  if (schema === false) return 'never';
  const node = asObject(schema, 'schema');
  if (typeof node.$ref === 'string') {
    if (!node.$ref.startsWith(COMPONENT_PREFIX)) throw new Error(`unsupported $ref ${node.$ref}`);
    return node.$ref.slice(COMPONENT_PREFIX.length);
  }
  if ('const' in node) return JSON.stringify(node.const);
  if (Array.isArray(node.enum)) return node.enum.map((value) => JSON.stringify(value)).join(' | ');
  const alternatives = (node.anyOf ?? node.oneOf) as Json[] | undefined;
  if (Array.isArray(alternatives)) {
    return alternatives.map((alternative) => typeOfSchema(alternative, indent)).join(' | ');
  }
  const base = typeOfTyped(node, indent);
  // allOf parts that only add constraints (patterns, lengths) leave the type as it is.
  const parts = Array.isArray(node.allOf)
    ? node.allOf.map((part) => typeOfSchema(part, indent)).filter((part) => part !== 'unknown')
    : [];
  const all = [base, ...parts].filter((part) => part !== 'unknown');
  if (all.length <= 1) return all[0] ?? 'unknown';
  // A union inside an intersection needs parentheses; `|` is the only operator that can lead one.
  return all.map((part) => (part.includes(' | ') ? `(${part})` : part)).join(' & ');
}

function typeOfTyped(node: JsonObject, indent: string): string {
  const type = node.type;
  if (Array.isArray(type)) return type.map((t) => typeOfTyped({ ...node, type: t }, indent)).join(' | ');
  switch (type) {
    case 'string':
      return 'string';
    case 'integer':
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array':
      return `Array<${typeOfSchema(node.items, indent)}>`;
    case 'object':
      return objectType(node, indent);
    default:
      return 'unknown';
  }
}

/** A property's description, or that of a nullable's described branch (a time that may be null). */
export function descriptionOf(value: Json): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const node = value as JsonObject;
  if (typeof node.description === 'string') return node.description;
  const branches = Array.isArray(node.anyOf) ? (node.anyOf as Json[]) : [];
  return branches.map(descriptionOf).find((d) => d !== undefined);
}

function objectType(node: JsonObject, indent: string): string {
  const properties = (node.properties ?? {}) as Record<string, Json>;
  const required = new Set((node.required ?? []) as string[]);
  const inner = `${indent}  `;
  const lines = Object.entries(properties).map(([key, value]) => {
    const description = descriptionOf(value);
    const optional = required.has(key) ? '' : '?';
    return `${docComment(description, inner)}${inner}${quoteKey(key)}${optional}: ${typeOfSchema(value, inner)};\n`;
  });
  const extra = node.additionalProperties;
  if (extra !== undefined && extra !== false) lines.push(`${inner}[key: string]: ${typeOfSchema(extra, inner)};\n`);
  if (lines.length === 0) return 'Record<string, never>';
  return `{\n${lines.join('')}${indent}}`;
}

function resolveParameter(doc: JsonObject, value: Json): Parameter {
  let node = asObject(value, 'parameter');
  if (typeof node.$ref === 'string') {
    const name = node.$ref.slice(PARAMETER_PREFIX.length);
    node = asObject(asObject(asObject(doc.components, 'components').parameters, 'parameters')[name], node.$ref);
  }
  return node as unknown as Parameter;
}

function modelOf(doc: JsonObject, method: string, path: string, operation: JsonObject): OperationModel {
  const name = operation.operationId;
  if (typeof name !== 'string') throw new Error(`${method} ${path} has no operationId`);
  const parameters = ((operation.parameters ?? []) as Json[]).map((p) => resolveParameter(doc, p));
  const headers = new Set(parameters.filter((p) => p.in === 'header').map((p) => p.name));
  const content = operation.requestBody
    ? asObject(asObject(operation.requestBody, 'requestBody').content, 'content')['application/json']
    : undefined;
  const body = content ? asObject(asObject(content, 'media').schema, 'body schema') : null;
  const responses = asObject(operation.responses, 'responses');
  const success = asObject(asObject(asObject(responses['200'], '200').content, 'content')['application/json'], '200');
  const output = asObject(success.schema, 'output schema');
  const pathParams = parameters.filter((p) => p.in === 'path');
  const queryParams = parameters.filter((p) => p.in === 'query');

  const fieldOwners = new Map<string, string>();
  const claim = (field: string, where: string) => {
    const owner = fieldOwners.get(field);
    if (owner) throw new Error(`${name}: input field ${field} is both in ${owner} and in ${where}`);
    fieldOwners.set(field, where);
  };
  for (const p of pathParams) claim(p.name, 'path');
  for (const p of queryParams) claim(p.name, 'query');
  for (const field of Object.keys((body?.properties ?? {}) as JsonObject)) claim(field, 'body');

  return {
    name,
    typeName: pascal(name),
    method: method.toUpperCase(),
    path,
    summary: typeof operation.summary === 'string' ? operation.summary : '',
    description: typeof operation.description === 'string' ? operation.description : '',
    pathParams,
    queryParams,
    body,
    output,
    idempotent: headers.has(IDEMPOTENCY_HEADER),
    mutates: operation['x-mutates'] === true,
    workspace: headers.has(WORKSPACE_HEADER),
    errors: errorCodesOf(doc, responses),
    pager: pagerOf(queryParams, output),
  };
}

/** Error codes an operation can answer: those of the error table whose status it lists. */
function errorCodesOf(doc: JsonObject, responses: JsonObject): string[] {
  const table = asObject(doc['x-error-table'], 'x-error-table');
  const statuses = new Set(Object.keys(responses).filter((status) => status !== '200'));
  return Object.entries(table)
    .filter(([, entry]) => statuses.has(String(asObject(entry, 'error entry').status)))
    .map(([code]) => code);
}

/**
 * A listing pages when a query parameter `P` comes back as `next_P` beside exactly one array:
 * `cursor`/`next_cursor` for the lists, `after`/`next_after` for a feed.
 */
function pagerOf(queryParams: Parameter[], output: JsonObject): Pager | null {
  const properties = (output.properties ?? {}) as Record<string, JsonObject>;
  const arrays = Object.entries(properties)
    .filter(([, schema]) => schema.type === 'array')
    .map(([key]) => key);
  for (const param of queryParams) {
    const next = `next_${param.name}`;
    if (next in properties && arrays.length === 1) return { param: param.name, next, items: arrays[0] as string };
  }
  return null;
}

function inputType(op: OperationModel): string {
  const properties: Record<string, Json> = {};
  const required: string[] = [];
  for (const p of [...op.pathParams, ...op.queryParams]) {
    properties[p.name] = p.description ? { ...p.schema, description: p.description } : p.schema;
    if (p.required) required.push(p.name);
  }
  for (const [key, value] of Object.entries((op.body?.properties ?? {}) as JsonObject)) properties[key] = value;
  required.push(...((op.body?.required ?? []) as string[]));
  return objectType({ type: 'object', properties, required }, '');
}

export function hasRequiredInput(op: OperationModel): boolean {
  return (
    op.pathParams.some((p) => p.required) ||
    op.queryParams.some((p) => p.required) ||
    ((op.body?.required ?? []) as string[]).length > 0
  );
}

export interface MethodTree {
  [segment: string]: MethodTree | OperationModel;
}

export function isOperation(node: MethodTree | OperationModel): node is OperationModel {
  return typeof (node as OperationModel).name === 'string' && typeof (node as OperationModel).method === 'string';
}

export function methodTree(operations: OperationModel[]): MethodTree {
  const root: MethodTree = {};
  for (const op of operations) {
    const segments = op.name.split('.');
    let at = root;
    for (const segment of segments.slice(0, -1)) {
      const next = at[segment] ?? {};
      if (isOperation(next)) throw new Error(`${op.name}: ${segment} is already an operation`);
      at[segment] = next;
      at = next;
    }
    const leaf = segments[segments.length - 1] as string;
    if (at[leaf]) throw new Error(`${op.name}: the name is already taken by a group or operation`);
    at[leaf] = op;
  }
  return root;
}

function methodsType(tree: MethodTree, indent: string): string {
  const inner = `${indent}  `;
  const lines = Object.entries(tree).map(([key, node]) => {
    if (!isOperation(node)) return `${inner}${quoteKey(key)}: ${methodsType(node, inner)};\n`;
    const optional = hasRequiredInput(node) ? '' : '?';
    return (
      `${docComment(`${node.method} ${node.path}: ${node.summary}`, inner)}` +
      `${inner}${quoteKey(key)}(input${optional}: ${node.typeName}Input, options?: CallOptions): Promise<${node.typeName}Output>;\n`
    );
  });
  return `{\n${lines.join('')}${indent}}`;
}

function tableEntry(op: OperationModel): string {
  const entry = {
    method: op.method,
    path: op.path,
    pathParams: op.pathParams.map((p) => p.name),
    query: op.queryParams.map((p) => p.name),
    body: op.body !== null,
    idempotent: op.idempotent,
    mutates: op.mutates,
    workspace: op.workspace,
    pager: op.pager,
  };
  return `  ${JSON.stringify(op.name)}: ${JSON.stringify(entry)},\n`;
}

export function operationsOf(doc: JsonObject): OperationModel[] {
  const out: OperationModel[] = [];
  for (const [path, item] of Object.entries(asObject(doc.paths, 'paths'))) {
    for (const [method, operation] of Object.entries(asObject(item, path))) {
      out.push(modelOf(doc, method, path, asObject(operation, `${method} ${path}`)));
    }
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The whole generated module for the OpenAPI document `doc`. */
export function generateClientModule(doc: JsonObject): string {
  const operations = operationsOf(doc);
  const schemas = asObject(asObject(doc.components, 'components').schemas, 'schemas');
  const errorTable = asObject(doc['x-error-table'], 'x-error-table');
  const out: string[] = [];
  out.push(
    '// Generated from schema/openapi.json by `pnpm generate` (scripts/generate-client.ts). Do not edit.\n',
    "import type { CallOptions } from './options';\n\n",
    `/** Every error code of the service. */\nexport type ErrorCode = ${Object.keys(errorTable)
      .map((code) => JSON.stringify(code))
      .join(' | ')};\n\n`,
    '/** HTTP status, retryability and message of every error code (decisions.md §7). */\n',
    `export const ERROR_TABLE: Record<ErrorCode, { status: number; retryable: boolean; message: string }> = ${JSON.stringify(errorTable)};\n\n`,
  );
  for (const name of Object.keys(schemas).sort()) {
    if (name === 'Error') continue;
    out.push(`export type ${name} = ${typeOfSchema(schemas[name])};\n\n`);
  }
  for (const op of operations) {
    out.push(`/** Input of \`${op.name}\`: path, query and body fields in one object. */\n`);
    out.push(`export type ${op.typeName}Input = ${inputType(op)};\n\n`);
    out.push(`/** Answer of \`${op.name}\`. */\nexport type ${op.typeName}Output = ${typeOfSchema(op.output)};\n\n`);
  }
  out.push(
    '/** Input, output and error codes of each operation, by operation name. */\nexport interface Operations {\n',
  );
  for (const op of operations) {
    const errors = op.errors.map((code) => JSON.stringify(code)).join(' | ') || 'never';
    out.push(
      `  ${JSON.stringify(op.name)}: { input: ${op.typeName}Input; output: ${op.typeName}Output; errors: ${errors} };\n`,
    );
  }
  out.push('}\n\n');
  out.push('export type OperationName = keyof Operations;\n\n');
  out.push(
    '/** How to call each operation: the runtime dispatches on this table alone. */\n',
    'export const OPERATION_TABLE = {\n',
    ...operations.map(tableEntry),
    '} as const;\n\n',
  );
  out.push(
    `/** One method per operation, nested by the dots of its name. */\nexport interface ClientMethods ${methodsType(methodTree(operations), '')}\n`,
  );
  return out.join('');
}
