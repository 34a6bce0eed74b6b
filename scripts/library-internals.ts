/**
 * Finds the places where the project's code reaches into a library's internals: members that a
 * library does not declare publicly (private or protected ones, ones its type declarations leave
 * out, such as Drizzle's `@internal` members). TypeScript refuses such an access unless the
 * value is first cast to a shape that names the member, or the member is named in brackets;
 * those are the two forms looked for:
 *
 *   (db as { session?: unknown }).session                 // a cast naming a member
 *   column as unknown as { shouldDisableInsert(): boolean }
 *   client['privateField']                                 // a bracket access
 *
 * A cast is reported when the value cast has a library's type (declared in node_modules, the
 * TypeScript and Node type libraries aside) and a member the cast names is hidden by it: declared
 * private, protected or `@internal`, or left out of its declarations while its own code defines
 * it. A member the library defines nowhere is the project's own addition, and a cast of a value
 * typed `unknown` (a caught error, a parsed body) makes no claim against a library: neither is
 * reported. A bracket access is reported when it names a private or protected member.
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

export interface InternalAccess {
  /** Path relative to the root, and 1-based line. */
  file: string;
  line: number;
  /** The member reached and the type it was reached on, as TypeScript prints it. */
  member: string;
  on: string;
}

/** Where the project's own code lives: every package's and service's `src`. */
export function sourceFiles(root: string): string[] {
  const files: string[] = [];
  for (const group of ['packages', 'services']) {
    for (const name of fs.readdirSync(path.join(root, group))) {
      const src = path.join(root, group, name, 'src');
      if (fs.existsSync(src)) walk(src, files);
    }
  }
  return files;
}

function walk(dir: string, into: string[]): void {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules') walk(full, into);
    } else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts')) into.push(full);
  }
}

/** A cast to an object shape (through `unknown` or not), or a bracket access by a literal name. */
interface Candidate {
  node: ts.Node;
  operand: ts.Expression;
  members: string[];
  /** A cast claims the members exist; a bracket access is checked by TypeScript, except for privacy. */
  form: 'cast' | 'bracket';
}

function unwrap(type: ts.TypeNode): ts.TypeNode {
  return ts.isParenthesizedTypeNode(type) ? unwrap(type.type) : type;
}

function innermostOperand(expression: ts.Expression): ts.Expression {
  let current = expression;
  for (;;) {
    if (ts.isParenthesizedExpression(current)) current = current.expression;
    else if ((ts.isAsExpression(current) || ts.isTypeAssertionExpression(current)) && isLoose(current.type)) {
      current = current.expression;
    } else return current;
  }
}

/** `unknown` and `any` let a cast reach any shape; such a cast is judged by what was cast before it. */
function isLoose(type: ts.TypeNode): boolean {
  const kind = unwrap(type).kind;
  return kind === ts.SyntaxKind.UnknownKeyword || kind === ts.SyntaxKind.AnyKeyword;
}

function memberNames(literal: ts.TypeLiteralNode): string[] {
  return literal.members.flatMap((member) =>
    member.name && (ts.isIdentifier(member.name) || ts.isStringLiteral(member.name)) ? [member.name.text] : [],
  );
}

function candidatesOf(source: ts.SourceFile): Candidate[] {
  const found: Candidate[] = [];
  const visit = (node: ts.Node) => {
    if ((ts.isAsExpression(node) || ts.isTypeAssertionExpression(node)) && ts.isTypeLiteralNode(unwrap(node.type))) {
      const members = memberNames(unwrap(node.type) as ts.TypeLiteralNode);
      if (members.length > 0) found.push({ node, operand: innermostOperand(node.expression), members, form: 'cast' });
    }
    if (ts.isElementAccessExpression(node) && ts.isStringLiteralLike(node.argumentExpression)) {
      found.push({ node, operand: node.expression, members: [node.argumentExpression.text], form: 'bracket' });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Declared by a library: under node_modules, but not TypeScript's own lib nor Node's types. */
function inLibrary(declaration: ts.Declaration): boolean {
  const file = declaration.getSourceFile().fileName;
  return (
    file.includes('/node_modules/') && !file.includes('/node_modules/typescript/') && !file.includes('/@types/node/')
  );
}

/** The packages (their folders) whose declarations make up a type: none for the project's own types. */
function libraryPackagesOf(checker: ts.TypeChecker, type: ts.Type): Set<string> {
  const packages = new Set<string>();
  const note = (declarations: readonly ts.Declaration[] | undefined) => {
    for (const declaration of declarations ?? []) {
      if (inLibrary(declaration)) packages.add(packageFolderOf(declaration.getSourceFile().fileName));
    }
  };
  for (const part of type.isUnion() || type.isIntersection() ? type.types : [type]) {
    note((part.aliasSymbol ?? part.getSymbol())?.declarations);
    for (const property of checker.getPropertiesOfType(part)) note(property.declarations);
  }
  return packages;
}

function packageFolderOf(file: string): string {
  for (let dir = path.dirname(file); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
  }
  return path.dirname(file);
}

/**
 * The member names a package's own code defines on its objects (`this.name =`, methods, `#name`):
 * a member missing from its declarations but defined here is one the declarations hide (an
 * `@internal` one, stripped from them); one defined nowhere in it is the project's own addition.
 */
const definedMembers = new Map<string, Set<string>>();
function membersDefinedBy(folder: string): Set<string> {
  let names = definedMembers.get(folder);
  if (names) return names;
  names = new Set();
  const files: string[] = [];
  const collect = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules') collect(full);
      } else if (/\.(m|c)?js$/.test(entry.name)) files.push(full);
    }
  };
  collect(folder);
  const patterns = [
    /this\.#?([A-Za-z_$][\w$]*)\s*=[^=]/g,
    /^\s*(?:static\s+|async\s+|get\s+|set\s+)*#?([A-Za-z_$][\w$]*)\s*\([^)]*\)\s*\{/gm,
  ];
  for (const file of files) {
    const text = fs.readFileSync(file, 'utf8');
    for (const pattern of patterns) for (const match of text.matchAll(pattern)) names.add(match[1] as string);
  }
  definedMembers.set(folder, names);
  return names;
}

/**
 * How a type offers a member: publicly (declared so by some member of a union, or under an index
 * signature), hidden (declared private, protected, `#private` or `@internal`), or not at all.
 */
function offered(checker: ts.TypeChecker, type: ts.Type, name: string): 'public' | 'hidden' | 'absent' {
  const apparent = checker.getApparentType(type);
  let result: 'hidden' | 'absent' = 'absent';
  for (const part of apparent.isUnion() ? apparent.types : [apparent]) {
    const property = checker.getPropertyOfType(part, name);
    if (!property) {
      if (checker.getIndexInfosOfType(part).length > 0) return 'public';
      continue;
    }
    const hidden = (property.declarations ?? []).some((declaration) => {
      const flags = ts.getCombinedModifierFlags(declaration);
      return (
        (flags & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)) !== 0 ||
        ts.getJSDocTags(declaration).some((tag) => tag.tagName.text === 'internal') ||
        ts.isPrivateIdentifier(ts.getNameOfDeclaration(declaration) ?? declaration)
      );
    });
    if (!hidden) return 'public';
    result = 'hidden';
  }
  return result;
}

/** Every access to a library's internals in `files` (type-checked with the root tsconfig's options). */
export function findInternalAccesses(root: string, files: readonly string[]): InternalAccess[] {
  const config = ts.getParsedCommandLineOfConfigFile(
    path.join(root, 'tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
      },
    },
  );
  if (!config) throw new Error('tsconfig.json: unreadable');
  // Only files with a candidate are type-checked (with what they import): a fraction of the tree.
  const candidates = new Map<string, number>();
  for (const file of files) {
    const text = fs.readFileSync(file, 'utf8');
    if (!/\bas\b[^;]*\{|\[\s*['"`]/.test(text)) continue;
    const count = candidatesOf(ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)).length;
    if (count > 0) candidates.set(path.resolve(file), count);
  }
  const program = ts.createProgram([...candidates.keys()], { ...config.options, noEmit: true });
  const checker = program.getTypeChecker();
  const found: InternalAccess[] = [];
  for (const file of candidates.keys()) {
    const source = program.getSourceFile(file);
    if (!source) continue;
    for (const { node, operand, members, form } of candidatesOf(source)) {
      const type = checker.getTypeAtLocation(operand);
      if (type.flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown | ts.TypeFlags.Never)) continue;
      const packages = libraryPackagesOf(checker, type);
      if (packages.size === 0) continue;
      for (const member of members) {
        const how = offered(checker, type, member);
        if (how === 'public') continue;
        if (how === 'absent') {
          // TypeScript checks a bracket access itself; a cast reaches a hidden member only if the library defines it.
          if (form === 'bracket' || ![...packages].some((folder) => membersDefinedBy(folder).has(member))) continue;
        }
        const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
        found.push({ file: path.relative(root, file), line: line + 1, member, on: checker.typeToString(type) });
      }
    }
  }
  return found;
}
