/**
 * `pnpm typecheck` for the root tsconfig: TypeScript's diagnostics, as `tsc --noEmit` prints
 * them, then the scan for reaches into libraries' internals (scripts/library-internals.ts) on the
 * same checked program, so the tree is type-checked once for both.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { findInternalAccesses, rootConfig, sourceFiles } from './library-internals';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const config = rootConfig(root);
const program = ts.createProgram({
  rootNames: config.fileNames,
  options: config.options,
  projectReferences: config.projectReferences,
});
const diagnostics = ts.sortAndDeduplicateDiagnostics([...config.errors, ...ts.getPreEmitDiagnostics(program)]);
if (diagnostics.length > 0) {
  const host: ts.FormatDiagnosticsHost = {
    getCanonicalFileName: (name) => name,
    getCurrentDirectory: () => root,
    getNewLine: () => '\n',
  };
  process.stderr.write(ts.formatDiagnosticsWithColorAndContext(diagnostics, host));
  process.stderr.write(`\nFound ${diagnostics.length} error(s).\n`);
  process.exit(2);
}
const reaches = findInternalAccesses(root, sourceFiles(root), program);
if (reaches.length > 0) {
  for (const { file, line, member, on } of reaches) {
    process.stderr.write(`${file}:${line}: reaches \`${member}\`, not public on ${on}\n`);
  }
  process.stderr.write(
    `\n${reaches.length} reach(es) into a library's internals: use its public API (scripts/library-internals.ts)\n`,
  );
  process.exit(1);
}
