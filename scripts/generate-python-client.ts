import type { Json, JsonObject } from '../packages/catalog/src/openapi';
import {
  asObject,
  COMPONENT_PREFIX,
  descriptionOf,
  hasRequiredInput,
  isOperation,
  type MethodTree,
  methodTree,
  type OperationModel,
  operationsOf,
  type Parameter,
  pascal,
} from './generate-client';

/**
 * Writes the operation layer of the Python client (`tms_client/_generated.py`) from the OpenAPI
 * document alone, with the same operation model as the TypeScript client: TypedDicts of every
 * component, input and output, the table the runtime dispatches on, and one method per operation
 * (sync and async), nested by the dots of its name, whose keyword-only arguments are the path,
 * query and body fields as the API names them. Only the recall-after-a-write helper names an
 * operation (`WAIT_HELPER`); a new operation needs nothing but a regenerated document.
 */

export const PYTHON_CLIENT_GENERATED_PATH = 'packages/client-python/src/tms_client/_generated.py';

/** `recall_when_indexed`: `recall` with the fields it sets itself left out, and arguments of its own. */
const WAIT_HELPER = {
  operation: 'recall',
  method: 'recall_when_indexed',
  owns: ['min_sequence', 'wait_ms'],
  adds: ['after', 'timeout'],
};

/** Names the clients define themselves beside the operations (a top-level operation may not take one). */
const CLIENT_ATTRIBUTES = new Set([
  'call',
  'paginate',
  WAIT_HELPER.method,
  'with_workspace',
  'workspace_id',
  'base_url',
  'close',
  'aclose',
]);

/** Per-call keyword arguments every method takes besides the API's fields. */
const CALL_OPTIONS = ['request_id', 'idempotency_key'];

/**
 * Names an annotation may use, which no field or method may shadow: an annotation inside a class
 * resolves a name among the class's attributes first. (Arguments use `Sequence`, never `list`.)
 */
const ANNOTATION_NAMES = new Set(['str', 'int', 'float', 'bool', 'object', 'dict', 'None', 'Sequence', 'Any']);

const PYTHON_KEYWORDS = new Set(
  (
    'False None True and as assert async await break class continue def del elif else except finally for from ' +
    'global if import in is lambda nonlocal not or pass raise return try while with yield'
  ).split(' '),
);

function identifier(name: string, what: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) || PYTHON_KEYWORDS.has(name)) {
    throw new Error(`${what}: ${JSON.stringify(name)} is not a Python identifier`);
  }
  return name;
}

/** A Python string literal (JSON's escapes are Python's, and JSON.stringify emits no `\/`). */
const pyString = (text: string) => JSON.stringify(text);

function pyLiteral(value: Json): string {
  if (value === null) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'string') return pyString(value);
  if (typeof value === 'number') return String(value);
  throw new Error(`unsupported literal ${JSON.stringify(value)}`);
}

function docstring(text: string, indent: string): string {
  const escaped = text.replace(/\\/g, '\\\\').replace(/"""/g, '\\"\\"\\"').trimEnd();
  const lines = escaped.split('\n').map((line, index) => (index === 0 || line === '' ? line : `${indent}${line}`));
  const body = lines.join('\n');
  return lines.length === 1 ? `${indent}"""${body}"""\n` : `${indent}"""${body}\n${indent}"""\n`;
}

/** `items` -> `Item`, `entries` -> `Entry`, `evidence` -> `EvidenceItem`: the name of one element. */
function singular(property: string): string {
  const name = pascal(property);
  if (name.endsWith('ies')) return `${name.slice(0, -3)}y`;
  if (name.endsWith('s') && !name.endsWith('ss')) return name.slice(0, -1);
  return `${name}Item`;
}

const canonical = (value: Json | undefined) => JSON.stringify(value ?? null);

interface Definition {
  key: string;
  text: string;
}

/**
 * The Python types of a document: named TypedDicts and aliases, in the order first needed. An
 * inline object is named after where it sits (`RecallInputBudget`, `ChangesListOutputChange`);
 * the same name for two different schemas is refused.
 */
class PythonTypes {
  readonly definitions = new Map<string, Definition>();

  constructor(readonly componentNames: Set<string>) {}

  private define(name: string, key: string, render: () => string): string {
    identifier(name, 'type name');
    const existing = this.definitions.get(name);
    if (existing) {
      if (existing.key !== key) throw new Error(`two different types would be named ${name}`);
      return name;
    }
    if (this.componentNames.has(name) && !key.startsWith('component:')) {
      throw new Error(`an inline type would take the component name ${name}`);
    }
    // Reserve the name first: rendering may name nested types.
    this.definitions.set(name, { key, text: '' });
    const text = render();
    this.definitions.set(name, { key, text });
    return name;
  }

  /** A component: a TypedDict when it is an object, else an alias. */
  component(name: string, schema: Json): void {
    const node = asObject(schema, name);
    if (node.type === 'object' && node.properties) {
      this.typedDict(name, node, `component:${canonical(node)}`);
      return;
    }
    this.alias(name, this.typeOf(node, name), `component:${canonical(node)}`);
  }

  alias(name: string, expression: string, key: string, doc?: string): string {
    return this.define(name, key, () => {
      // Quoted when it names a generated type, which may be defined further down.
      const quoted = /\b[A-Z][A-Za-z0-9]*\b/.test(expression.replace(/\b(Literal|None)\b/g, ''))
        ? pyString(expression)
        : expression;
      return `${name}: TypeAlias = ${quoted}\n${doc ? docstring(doc, '') : ''}`;
    });
  }

  /** The first name given to each object schema, so that an identical inline object reuses it. */
  private readonly objectNames = new Map<string, string>();

  /**
   * The TypedDict of an object schema (its fields may name further types). An inline object
   * (no `key` of its own) identical to one already named takes that name.
   */
  typedDict(name: string, node: JsonObject, key?: string, doc?: string): string {
    const shape = canonical(node);
    const same = this.objectNames.get(shape);
    if (key === undefined && same !== undefined) return same;
    if (!this.objectNames.has(shape)) this.objectNames.set(shape, name);
    return this.define(name, key ?? `object:${shape}`, () => {
      const properties = (node.properties ?? {}) as Record<string, Json>;
      const required = new Set((node.required ?? []) as string[]);
      const extra = node.additionalProperties;
      if (extra !== undefined && extra !== false && Object.keys(properties).length > 0) {
        throw new Error(`${name}: an object with both properties and additionalProperties has no TypedDict`);
      }
      const lines: string[] = [];
      for (const [field, schema] of Object.entries(properties)) {
        identifier(field, `${name} field`);
        if (ANNOTATION_NAMES.has(field) || field === 'list')
          throw new Error(`${name}: field ${field} would shadow a type name`);
        const description = descriptionOf(schema);
        if (description) lines.push(`    #: ${description.replace(/\n/g, ' ')}\n`);
        const type = this.fieldType(schema, name, field);
        lines.push(`    ${field}: ${required.has(field) ? type : `NotRequired[${type}]`}\n`);
      }
      // A closed object (additionalProperties: false) is final, so `"key" in answer` narrows a union.
      const decorator = extra === false ? '@final\n' : '';
      const body = lines.length > 0 || doc ? lines.join('') : '    pass\n';
      return `${decorator}class ${name}(TypedDict):\n${doc ? docstring(doc, '    ') : ''}${body}`;
    });
  }

  /** The type of field `field` of the object named `owner`. */
  fieldType(schema: Json, owner: string, field: string): string {
    return this.typeOf(schema, `${owner}${pascal(field)}`, `${owner}${singular(field)}`);
  }

  /** A JSON Schema as a Python type expression; `hint` names an inline object, `itemHint` an array's element. */
  typeOf(schema: Json | undefined, hint: string, itemHint = `${hint}Item`): string {
    if (schema === undefined || schema === true) return 'object';
    const node = asObject(schema, hint);
    if (typeof node.$ref === 'string') {
      if (!node.$ref.startsWith(COMPONENT_PREFIX)) throw new Error(`unsupported $ref ${node.$ref}`);
      return node.$ref.slice(COMPONENT_PREFIX.length);
    }
    if ('const' in node) return node.const === null ? 'None' : `Literal[${pyLiteral(node.const as Json)}]`;
    if (Array.isArray(node.enum)) {
      const values = node.enum.filter((value) => value !== null);
      const literal = values.length > 0 ? `Literal[${values.map(pyLiteral).join(', ')}]` : null;
      return [literal, node.enum.includes(null) ? 'None' : null].filter((part) => part !== null).join(' | ');
    }
    const alternatives = (node.anyOf ?? node.oneOf) as Json[] | undefined;
    if (Array.isArray(alternatives)) return this.unionOf(alternatives, hint, itemHint);
    const parts = Array.isArray(node.allOf)
      ? node.allOf.map((part) => this.typeOf(part, hint, itemHint)).filter((part) => part !== 'object')
      : [];
    const base = this.typedType(node, hint, itemHint);
    const all = [base, ...parts].filter((part) => part !== 'object');
    if (all.length > 1 && new Set(all).size > 1) throw new Error(`${hint}: allOf of several types has no Python type`);
    return all[0] ?? 'object';
  }

  private unionOf(alternatives: Json[], hint: string, itemHint: string): string {
    const objects = alternatives.filter((alternative) => isInlineObject(alternative));
    const names = objects.length > 1 ? branchNames(objects as JsonObject[], hint) : [];
    const types = alternatives.map((alternative) => {
      const at = objects.indexOf(alternative);
      return this.typeOf(alternative, at >= 0 && names[at] ? names[at] : hint, itemHint);
    });
    return [...new Set(types)].join(' | ');
  }

  private typedType(node: JsonObject, hint: string, itemHint: string): string {
    const type = node.type;
    if (Array.isArray(type)) {
      return [...new Set(type.map((t) => this.typedType({ ...node, type: t }, hint, itemHint)))].join(' | ');
    }
    switch (type) {
      case 'string':
        return 'str';
      case 'integer':
        return 'int';
      case 'number':
        return 'float';
      case 'boolean':
        return 'bool';
      case 'null':
        return 'None';
      case 'array':
        return `list[${this.typeOf(node.items, itemHint)}]`;
      case 'object': {
        const properties = (node.properties ?? {}) as JsonObject;
        const extra = node.additionalProperties;
        if (Object.keys(properties).length === 0 && extra !== undefined && extra !== false) {
          return `dict[str, ${this.typeOf(extra, `${hint}Value`)}]`;
        }
        return this.typedDict(hint, node);
      }
      default:
        return 'object';
    }
  }

  /**
   * A method argument: as in a TypedDict, but an array is any Sequence (a list or a tuple), which
   * also keeps `list` out of the annotations of a class that has a method named `list`.
   */
  argumentType(schema: Json, owner: string, field: string): string {
    return this.fieldType(schema, owner, field).replace(/\blist\[/g, 'Sequence[');
  }

  render(): string {
    return [...this.definitions.values()].map((definition) => definition.text).join('\n\n');
  }
}

function isInlineObject(schema: Json): boolean {
  return typeof schema === 'object' && schema !== null && !Array.isArray(schema) && schema.type === 'object';
}

/**
 * Names of a union's object branches: by a property that is a distinct constant in each
 * (`GrantTargetActor`), else by the first required field no other branch has
 * (`MemoriesForgetOutputWithReceipt`), else by position.
 */
function branchNames(branches: JsonObject[], hint: string): string[] {
  const propertiesOf = (branch: JsonObject) => (branch.properties ?? {}) as Record<string, JsonObject>;
  const tags = Object.keys(propertiesOf(branches[0] as JsonObject)).filter((field) =>
    branches.every((branch) => {
      const property = propertiesOf(branch)[field];
      return property !== undefined && typeof property.const === 'string';
    }),
  );
  for (const tag of tags) {
    const values = branches.map((branch) => propertiesOf(branch)[tag]?.const as string);
    if (new Set(values).size === values.length) return values.map((value) => `${hint}${pascal(value)}`);
  }
  const names = branches.map((branch) => {
    const own = ((branch.required ?? []) as string[]).find((field) =>
      branches.every((other) => other === branch || !(field in propertiesOf(other))),
    );
    return own ? `${hint}With${pascal(own)}` : null;
  });
  if (names.every((name) => name !== null) && new Set(names).size === names.length) return names as string[];
  return branches.map((_, index) => `${hint}${index + 1}`);
}

/** One field of an operation's input: where it goes, its schema and whether it must be given. */
interface InputField {
  name: string;
  schema: Json;
  required: boolean;
  description: string | undefined;
}

function inputFields(op: OperationModel): InputField[] {
  const fromParameter = (p: Parameter): InputField => ({
    name: p.name,
    schema: p.schema,
    required: p.required,
    description: p.description ?? descriptionOf(p.schema),
  });
  const required = new Set((op.body?.required ?? []) as string[]);
  const body = Object.entries((op.body?.properties ?? {}) as Record<string, Json>).map(([name, schema]) => ({
    name,
    schema,
    required: required.has(name),
    description: descriptionOf(schema),
  }));
  const fields = [...op.pathParams.map(fromParameter), ...op.queryParams.map(fromParameter), ...body];
  for (const field of fields) {
    identifier(field.name, `${op.name} input`);
    if (CALL_OPTIONS.includes(field.name) || ANNOTATION_NAMES.has(field.name)) {
      throw new Error(`${op.name}: input field ${field.name} collides with a name of the client`);
    }
  }
  // Required fields first, so that a signature reads as what must be given, then what may be.
  return [...fields.filter((f) => f.required), ...fields.filter((f) => !f.required)];
}

function defaultOf(schema: Json): Json | undefined {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return undefined;
  return 'default' in schema ? (schema.default as Json) : undefined;
}

/** The input TypedDict of an operation (what `call` takes). */
function inputTypeOf(types: PythonTypes, op: OperationModel): string {
  const properties: Record<string, Json> = {};
  const required: string[] = [];
  for (const field of inputFields(op)) {
    properties[field.name] =
      field.description && !descriptionOf(field.schema)
        ? { ...asObject(field.schema, field.name), description: field.description }
        : field.schema;
    if (field.required) required.push(field.name);
  }
  const name = `${op.typeName}Input`;
  const doc = `Input of \`${op.name}\`: its path, query and body fields in one dict.`;
  types.typedDict(name, { type: 'object', properties, required, additionalProperties: false }, `input:${op.name}`, doc);
  return name;
}

function outputTypeOf(types: PythonTypes, op: OperationModel): string {
  const name = `${op.typeName}Output`;
  const doc = `Answer of \`${op.name}\`.`;
  if (op.output.type === 'object' && op.output.properties) {
    types.typedDict(name, op.output, `output:${op.name}`, doc);
  } else {
    types.alias(name, types.typeOf(op.output, name), `output:${op.name}`, doc);
  }
  return name;
}

/** The type of one element of a paged operation's answer. */
function pageItemTypeOf(types: PythonTypes, op: OperationModel): string {
  if (!op.pager) throw new Error(`${op.name} does not page`);
  const items = ((op.output.properties ?? {}) as Record<string, Json>)[op.pager.items];
  const node = asObject(items, `${op.name} items`);
  return types.typeOf(node.items, `${op.typeName}Output${singular(op.pager.items)}`);
}

interface Flavour {
  async: boolean;
  /** Prefix of the class names (`Async` or nothing). */
  prefix: string;
  def: string;
  await: string;
  iterator: string;
}

const SYNC: Flavour = { async: false, prefix: '', def: 'def', await: '', iterator: 'Iterator' };
const ASYNC: Flavour = { async: true, prefix: 'Async', def: 'async def', await: 'await ', iterator: 'AsyncIterator' };

interface Argument {
  text: string;
  doc: string | null;
}

function fieldArguments(types: PythonTypes, op: OperationModel, leaveOut: string[] = []): Argument[] {
  const owner = `${op.typeName}Input`;
  return inputFields(op)
    .filter((field) => !leaveOut.includes(field.name))
    .map((field) => {
      const type = types.argumentType(field.schema, owner, field.name);
      const fallback = defaultOf(field.schema);
      const described =
        field.description && !/[.!?]$/.test(field.description) ? `${field.description}.` : field.description;
      const notes = [described, fallback === undefined ? null : `Default: \`${JSON.stringify(fallback)}\`.`]
        .filter((note) => note)
        .join(' ');
      return {
        text: field.required ? `${field.name}: ${type}` : `${field.name}: ${type} | NotGiven = NOT_GIVEN`,
        doc: notes ? `${field.name}: ${notes}` : null,
      };
    });
}

function callOptionArguments(op: OperationModel): Argument[] {
  const out: Argument[] = [];
  if (op.idempotent) {
    out.push({
      text: 'idempotency_key: str | None = None',
      doc: 'idempotency_key: The Idempotency-Key of this write; by default a fresh one, reused by every retry.',
    });
  }
  out.push({ text: 'request_id: str | None = None', doc: 'request_id: Sent as X-Request-Id.' });
  return out;
}

function signature(name: string, flavour: Flavour, args: Argument[], returns: string, indent: string): string {
  const inner = `${indent}    `;
  const lines = args.map((arg) => `${inner}${arg.text},\n`).join('');
  return `${indent}${flavour.def} ${name}(\n${inner}self,\n${inner}*,\n${lines}${indent}) -> ${returns}:\n`;
}

function argsDoc(args: Argument[]): string {
  const documented = args.filter((arg) => arg.doc !== null);
  if (documented.length === 0) return '';
  return `\n\nArgs:\n${documented.map((arg) => `    ${arg.doc}`).join('\n')}`;
}

/** `given(a=a, b=b)` over several lines at `indent`. */
const given = (names: string[], indent: string) =>
  names.length === 0 ? 'given()' : `given(\n${names.map((n) => `${indent}    ${n}=${n},\n`).join('')}${indent})`;

/** The method of `op` named `leaf`, in a group class (which reaches the client as `self._root`) or in the root. */
function operationMethod(types: PythonTypes, op: OperationModel, leaf: string, flavour: Flavour, root = false): string {
  identifier(leaf, `${op.name} method`);
  const output = `${op.typeName}Output`;
  const fields = fieldArguments(types, op);
  const args = [...fields, ...callOptionArguments(op)];
  const names = inputFields(op).map((f) => f.name);
  const doc = `${op.method} ${op.path}: ${op.description || op.summary}${argsDoc(args)}`;
  const key = op.idempotent ? 'idempotency_key' : 'None';
  return (
    signature(leaf, flavour, args, output, '    ') +
    docstring(doc, '        ') +
    `        return cast(\n            ${output},\n` +
    `            ${flavour.await}${root ? 'self' : 'self._root'}._call(\n                ${pyString(op.name)},\n` +
    `                ${given(names, '                ')},\n` +
    `                idempotency_key=${key},\n                request_id=request_id,\n            ),\n        )\n`
  );
}

function groupClassName(path: string[], flavour: Flavour): string {
  return `${flavour.prefix}${path.map(pascal).join('')}Operations`;
}

/** The classes of one flavour: a class per group (nested by name), then the root. */
function operationClasses(types: PythonTypes, tree: MethodTree, flavour: Flavour, ops: OperationModel[]): string {
  const out: string[] = [];
  const rootName = `${flavour.prefix}Operations`;

  const groupClass = (node: MethodTree, path: string[]): void => {
    const name = groupClassName(path, flavour);
    const lines: string[] = [];
    const groups = Object.entries(node).filter(([, child]) => !isOperation(child));
    for (const [segment, child] of groups) groupClass(child as MethodTree, [...path, segment]);
    lines.push(`class ${name}:\n`, docstring(`The \`${path.join('.')}.*\` operations.`, '    '), '\n');
    for (const [segment] of groups) {
      lines.push(`    ${identifier(segment, 'group')}: ${groupClassName([...path, segment], flavour)}\n`);
    }
    if (groups.length > 0) lines.push('\n');
    lines.push(`    def __init__(self, root: ${rootName}) -> None:\n        self._root = root\n`);
    for (const [segment] of groups) {
      lines.push(`        self.${segment} = ${groupClassName([...path, segment], flavour)}(root)\n`);
    }
    for (const [segment, child] of Object.entries(node)) {
      if (!isOperation(child)) continue;
      if (ANNOTATION_NAMES.has(segment)) throw new Error(`${child.name}: method ${segment} would shadow a type name`);
      lines.push('\n', operationMethod(types, child, segment, flavour));
    }
    out.push(lines.join(''));
  };

  const rootGroups = Object.entries(tree).filter(([, child]) => !isOperation(child));
  for (const [segment, child] of rootGroups) groupClass(child as MethodTree, [segment]);

  const root: string[] = [];
  root.push(
    `class ${rootName}:\n`,
    docstring(
      `One method per operation of the API, nested by the dots of its name (the ${flavour.async ? 'asynchronous' : 'synchronous'} flavour).`,
      '    ',
    ),
    '\n',
  );
  for (const [segment] of rootGroups) root.push(`    ${segment}: ${groupClassName([segment], flavour)}\n`);
  root.push('\n    def __init__(self) -> None:\n');
  for (const [segment] of rootGroups)
    root.push(`        self.${segment} = ${groupClassName([segment], flavour)}(self)\n`);
  root.push(
    '\n',
    `    ${flavour.def} _call(\n        self,\n        operation: OperationName,\n        fields: Mapping[str, object],\n` +
      '        *,\n        idempotency_key: str | None,\n        request_id: str | None,\n    ) -> Any:\n',
    '        raise NotImplementedError\n\n',
    `    def _paginate(\n        self, operation: PagedOperationName, fields: Mapping[str, object], *, request_id: str | None\n` +
      `    ) -> ${flavour.iterator}[Any]:\n        raise NotImplementedError\n\n`,
    `    ${flavour.def} _recall_when_indexed(\n        self, fields: Mapping[str, object], *, after: SequenceRef, timeout: float, request_id: str | None\n` +
      `    ) -> Any:\n        raise NotImplementedError\n`,
  );
  for (const [segment, child] of Object.entries(tree)) {
    if (!isOperation(child)) continue;
    if (CLIENT_ATTRIBUTES.has(segment)) throw new Error(`${child.name}: ${segment} is a name of the client itself`);
    root.push('\n', operationMethod(types, child, segment, flavour, true));
  }
  root.push('\n', callMethod(ops, flavour));
  root.push('\n', paginateMethod(types, ops, flavour));
  root.push('\n', waitHelper(types, ops, flavour));
  out.push(root.join(''));
  return out.join('\n\n');
}

/** `call(name, fields)`: typed per operation by overloads. */
function callMethod(ops: OperationModel[], flavour: Flavour): string {
  const lines: string[] = [];
  for (const op of ops) {
    const input = `${op.typeName}Input`;
    const fields = hasRequiredInput(op) ? `fields: ${input}` : `fields: ${input} | None = None`;
    const key = op.idempotent ? 'idempotency_key: str | None = None, ' : '';
    lines.push(
      `    @overload\n    ${flavour.def} call(\n        self, operation: Literal[${pyString(op.name)}], ${fields}, *, ${key}request_id: str | None = None\n` +
        `    ) -> ${op.typeName}Output: ...\n`,
    );
  }
  const doc = [
    'Call an operation by its catalog name with its fields in one dict (path, query and body alike).',
    '',
    '`idempotency_key` applies to idempotent writes only (others take none).',
  ].join('\n');
  lines.push(
    `    ${flavour.def} call(\n        self,\n        operation: OperationName,\n        fields: Mapping[str, Any] | None = None,\n` +
      '        *,\n        idempotency_key: str | None = None,\n        request_id: str | None = None,\n    ) -> Any:\n',
    docstring(doc, '        '),
    '        spec = OPERATIONS.get(operation)\n',
    '        if spec is None:\n            raise ValueError(f"unknown operation {operation!r}")\n',
    '        if idempotency_key is not None and not spec.idempotent:\n',
    '            raise TypeError(f"{operation} takes no idempotency_key")\n',
    `        return ${flavour.await}self._call(\n` +
      '            operation, dict(fields or {}), idempotency_key=idempotency_key, request_id=request_id\n        )\n',
  );
  return lines.join('\n');
}

/** `paginate(name, **fields)`: every item of a paged listing, typed per operation by overloads. */
function paginateMethod(types: PythonTypes, ops: OperationModel[], flavour: Flavour): string {
  const paged = ops.filter((op) => op.pager !== null);
  const lines: string[] = [];
  for (const op of paged) {
    const args = [...fieldArguments(types, op), { text: 'request_id: str | None = None', doc: null }];
    const item = pageItemTypeOf(types, op);
    const inner = '        ';
    lines.push(
      `    @overload\n    def paginate(\n${inner}self,\n${inner}operation: Literal[${pyString(op.name)}],\n${inner}*,\n` +
        `${args.map((arg) => `${inner}${arg.text},\n`).join('')}    ) -> ${flavour.iterator}[${item}]: ...\n`,
    );
  }
  const pagers = paged.map((op) => `\`${op.name}\``).join(', ');
  const doc = [
    `Every item of a paged listing (${pagers}), page after page.`,
    '',
    'Takes the fields of the listing as keyword arguments and follows its cursor until the last page;',
    'a feed paged by `after` ends when it has caught up.',
  ].join('\n');
  if (paged.length >= 2) {
    lines.push(
      `    def paginate(\n        self, operation: PagedOperationName, *, request_id: str | None = None, **fields: Any\n` +
        `    ) -> ${flavour.iterator}[Any]:\n`,
      docstring(doc, '        '),
      '        return self._paginate(operation, given(**fields), request_id=request_id)\n',
    );
  } else {
    // One overload is not allowed: a single paged operation gets a plain, typed method.
    const [op] = paged;
    if (!op) return '';
    const args = [...fieldArguments(types, op), { text: 'request_id: str | None = None', doc: null }];
    const names = inputFields(op).map((f) => f.name);
    lines.length = 0;
    lines.push(
      `    def paginate(\n        self,\n        operation: Literal[${pyString(op.name)}],\n        *,\n` +
        `${args.map((arg) => `        ${arg.text},\n`).join('')}    ) -> ${flavour.iterator}[${pageItemTypeOf(types, op)}]:\n`,
      docstring(doc, '        '),
      `        return self._paginate(operation, ${given(names, '        ')}, request_id=request_id)\n`,
    );
  }
  return lines.join('\n');
}

/** `recall_when_indexed(after=commit, ...)`: recall's fields but those it sets itself. */
function waitHelper(types: PythonTypes, ops: OperationModel[], flavour: Flavour): string {
  const op = ops.find((candidate) => candidate.name === WAIT_HELPER.operation);
  if (!op) throw new Error(`${WAIT_HELPER.method} needs the operation ${WAIT_HELPER.operation}`);
  const names = inputFields(op).map((f) => f.name);
  for (const owned of WAIT_HELPER.owns) {
    if (!names.includes(owned)) throw new Error(`${WAIT_HELPER.method} needs ${op.name}.${owned}`);
  }
  for (const added of WAIT_HELPER.adds) {
    if (names.includes(added)) throw new Error(`${op.name}: input field ${added} collides with ${WAIT_HELPER.method}`);
  }
  const fields = fieldArguments(types, op, WAIT_HELPER.owns);
  const args: Argument[] = [
    { text: 'after: SequenceRef', doc: 'after: A commit (a dict with its `sequence`) or a bare sequence number.' },
    ...fields,
    {
      text: 'timeout: float = 30.0',
      doc: 'timeout: Seconds to wait for the indexer in all before returning the `pending` answer.',
    },
    { text: 'request_id: str | None = None', doc: 'request_id: Sent as X-Request-Id.' },
  ];
  const doc =
    `Recall once the index has caught up with \`after\`: asks with \`min_sequence\` and \`wait_ms\`, again while the\n` +
    `answer is \`pending\`, until \`timeout\` has passed, then returns the last answer.${argsDoc(args)}`;
  const kept = names.filter((name) => !WAIT_HELPER.owns.includes(name));
  return (
    signature(WAIT_HELPER.method, flavour, args, `${op.typeName}Output`, '    ') +
    docstring(doc, '        ') +
    `        return cast(\n            ${op.typeName}Output,\n            ${flavour.await}self._recall_when_indexed(\n` +
    `                ${given(kept, '                ')},\n                after=after,\n                timeout=timeout,\n                request_id=request_id,\n            ),\n        )\n`
  );
}

function tableEntry(op: OperationModel): string {
  const tuple = (names: string[]) => `(${names.map(pyString).join(', ')}${names.length === 1 ? ',' : ''})`;
  const pager = op.pager
    ? `Pager(param=${pyString(op.pager.param)}, next=${pyString(op.pager.next)}, items=${pyString(op.pager.items)})`
    : 'None';
  return (
    `    ${pyString(op.name)}: OperationSpec(\n` +
    `        method=${pyString(op.method)},\n        path=${pyString(op.path)},\n` +
    `        path_params=${tuple(op.pathParams.map((p) => p.name))},\n        query=${tuple(op.queryParams.map((p) => p.name))},\n` +
    `        body=${op.body !== null ? 'True' : 'False'},\n        idempotent=${op.idempotent ? 'True' : 'False'},\n` +
    `        mutates=${op.mutates ? 'True' : 'False'},\n        workspace=${op.workspace ? 'True' : 'False'},\n` +
    `        pager=${pager},\n    ),\n`
  );
}

const HEADER = `# Generated from schema/openapi.json by \`pnpm generate\` (scripts/generate-python-client.ts). Do not edit.
"""Types of every input and output, the operation table, and one method per operation of the /v1 API."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias, TypedDict, cast, final, overload

from ._base import NOT_GIVEN, ErrorInfo, NotGiven, OperationSpec, Pager, SequenceRef, given

if sys.version_info >= (3, 11):
    from typing import NotRequired
elif TYPE_CHECKING:  # Python 3.10: only ever read by type checkers (annotations are not evaluated)
    from typing_extensions import NotRequired
`;

/** The whole generated module for the OpenAPI document \`doc\`. */
export function generatePythonModule(doc: JsonObject): string {
  const operations = operationsOf(doc);
  const schemas = asObject(asObject(doc.components, 'components').schemas, 'schemas');
  const errorTable = asObject(doc['x-error-table'], 'x-error-table');
  const componentNames = new Set(Object.keys(schemas).filter((name) => name !== 'Error'));
  const types = new PythonTypes(componentNames);

  const out: string[] = [HEADER, '\n'];
  const codes = Object.keys(errorTable);
  out.push(`ErrorCode: TypeAlias = Literal[${codes.map(pyString).join(', ')}]\n`);
  out.push('"""Every error code of the service."""\n\n');
  out.push('ERROR_TABLE: Final[Mapping[ErrorCode, ErrorInfo]] = {\n');
  for (const code of codes) {
    const entry = asObject(errorTable[code], code);
    out.push(
      `    ${pyString(code)}: ErrorInfo(status=${entry.status}, retryable=${entry.retryable ? 'True' : 'False'}, message=${pyString(String(entry.message))}),\n`,
    );
  }
  out.push('}\n"""HTTP status, retryability and message of every error code (decisions.md §7)."""\n\n');

  for (const name of [...componentNames].sort()) types.component(name, schemas[name] as Json);
  for (const op of operations) {
    inputTypeOf(types, op);
    outputTypeOf(types, op);
  }
  const tree = methodTree(operations);
  // The methods may name inline types of their own: render them before printing the types.
  const sync = operationClasses(types, tree, SYNC, operations);
  const asyncClasses = operationClasses(types, tree, ASYNC, operations);
  out.push(types.render(), '\n\n');

  const names = operations.map((op) => pyString(op.name));
  out.push(`OperationName: TypeAlias = Literal[${names.join(', ')}]\n\n`);
  const paged = operations.filter((op) => op.pager !== null).map((op) => pyString(op.name));
  out.push(`PagedOperationName: TypeAlias = Literal[${paged.join(', ')}]\n\n`);
  out.push(
    'OPERATIONS: Final[Mapping[OperationName, OperationSpec]] = {\n',
    ...operations.map(tableEntry),
    '}\n"""How to call each operation: the runtime dispatches on this table alone."""\n\n\n',
  );
  out.push(sync, '\n\n\n', asyncClasses);
  const exported = [
    'ERROR_TABLE',
    'ErrorCode',
    'OPERATIONS',
    'OperationName',
    'PagedOperationName',
    ...types.definitions.keys(),
    ...[...sync.matchAll(/^class (\w+)/gm), ...asyncClasses.matchAll(/^class (\w+)/gm)].map(
      (match) => match[1] as string,
    ),
  ].sort();
  out.push(`\n\n__all__ = [\n${exported.map((name) => `    ${pyString(name)},\n`).join('')}]\n`);
  return `${out.join('').replace(/\n{4,}/g, '\n\n\n')}`;
}
