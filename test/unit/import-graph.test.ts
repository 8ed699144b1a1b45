/**
 * The import graph of src/, computed from the sources with the TypeScript compiler API (every
 * `import`, `import type`, `export … from`, `import()` and `import('…').T` with a relative
 * specifier), has no cycle: neither between folders (docs/architecture.md "Layers": each folder
 * imports only the folders below it) nor between files.
 *
 * A folder is the first directory under src/ (files directly in src/ form the folder "."),
 * except under src/adapters/, where each adapter folder (src/adapters/speech, …) is a folder of
 * its own.
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const SRC = path.join(ROOT, 'src');
/** Folders whose subfolders are folders of their own for the folder graph. */
const GROUPS = new Set(['adapters']);

/** Every .ts/.tsx file under `dir`, as paths relative to the repo root with '/' separators. */
function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(full));
    else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(path.relative(ROOT, full).split(path.sep).join('/'));
  }
  return out.sort();
}

/** The relative module specifiers `file` imports, re-exports or loads, in any form. */
function specifiers(file: string): string[] {
  const source = ts.createSourceFile(file, fs.readFileSync(path.join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      found.push(node.moduleSpecifier.text);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [arg] = node.arguments;
      if (arg && ts.isStringLiteralLike(arg)) found.push(arg.text);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      found.push(node.argument.literal.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found.filter((s) => s.startsWith('.'));
}

/** The file a relative specifier of `from` names (`./x.js` → `x.ts`, `./x` → `x/index.ts`). */
function resolve(from: string, specifier: string, known: Set<string>): string | undefined {
  const base = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
  const stem = base.replace(/\.(m?js|jsx)$/, '');
  return [`${stem}.ts`, `${stem}.tsx`, `${base}/index.ts`, base].find((c) => known.has(c));
}

/** The folder of a file under src/ (see the header). */
function folderOf(file: string): string {
  const parts = file.split('/').slice(1, -1);
  if (parts.length === 0) return '.';
  return GROUPS.has(parts[0]!) && parts.length > 1 ? `${parts[0]}/${parts[1]}` : parts[0]!;
}

/** Strongly connected components of more than one node (or a node importing itself): the cycles. */
function cycles(graph: Map<string, Set<string>>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const connect = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || graph.get(v)?.has(v)) out.push(component.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) connect(v);
  return out;
}

const files = sourceFiles(SRC);
const known = new Set(files);
const fileGraph = new Map<string, Set<string>>();
/** Folder → folder → the file imports that make the edge ("a.ts → b.ts"), to say where a cycle runs. */
const folderEdges = new Map<string, Map<string, string[]>>();
const unresolved: string[] = [];
for (const file of files) {
  const targets = new Set<string>();
  for (const spec of specifiers(file)) {
    const target = resolve(file, spec, known);
    if (!target) {
      if (!path.posix.normalize(path.posix.join(path.posix.dirname(file), spec)).startsWith('src/')) continue;
      unresolved.push(`${file}: ${spec}`);
      continue;
    }
    targets.add(target);
    const [a, b] = [folderOf(file), folderOf(target)];
    if (a === b) continue;
    const edges = folderEdges.get(a) ?? new Map<string, string[]>();
    folderEdges.set(a, edges);
    edges.set(b, [...(edges.get(b) ?? []), `${file} → ${target}`]);
  }
  fileGraph.set(file, targets);
}
const folderGraph = new Map([...folderEdges].map(([a, edges]) => [a, new Set(edges.keys())]));

describe('the import graph of src/', () => {
  it('is read from the sources: every relative import names a file that exists', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(unresolved).toEqual([]);
  });

  it('has no cycle between folders', () => {
    const found = cycles(folderGraph).map((component) => {
      const inside = new Set(component);
      const edges = component.flatMap((a) =>
        [...(folderEdges.get(a) ?? [])].filter(([b]) => inside.has(b)).map(([b, via]) => `${a} → ${b} (${via.join('; ')})`),
      );
      return `${component.join(', ')}:\n  ${edges.join('\n  ')}`;
    });
    expect(found, 'folders that import each other, with the imports that do it').toEqual([]);
  });

  it('has no cycle between files', () => {
    expect(cycles(fileGraph), 'files that import each other, directly or through others').toEqual([]);
  });
});
