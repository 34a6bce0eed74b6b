/**
 * The user documents (README.md, docs/*.md, the packages' READMEs) hold together: every relative
 * link reaches a file of the repository (and a heading, when it names one), nothing points outside
 * the clone, the README stays a newcomer's page, no page keeps a diary, and configuration.md has a
 * row for every variable an env module reads.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { databasePoolEnvShape, domainEnvShape } from '../packages/composition/src/index';
import { webhookDeliveryEnvShape, webhookTargetEnvShape } from '../packages/webhooks/src/env';
import { ENV_KEYS as CLI_KEYS } from '../services/cli/src/env';
import { ENV_KEYS as GATEWAY_KEYS } from '../services/gateway/src/env';
import { ENV_KEYS as INDEXER_KEYS } from '../services/indexer/src/env';
import { REPO_ROOT } from './build';

const README_MAX_LINES = 400;

const relative = (file: string) => path.relative(REPO_ROOT, file);
const readText = (file: string) => fs.readFileSync(file, 'utf8');

function documents(): string[] {
  const docs = fs
    .readdirSync(path.join(REPO_ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => path.join(REPO_ROOT, 'docs', name));
  const packageReadmes = ['packages', 'services']
    .flatMap((dir) => fs.readdirSync(path.join(REPO_ROOT, dir)).map((name) => path.join(REPO_ROOT, dir, name)))
    .map((dir) => path.join(dir, 'README.md'))
    .filter((file) => fs.existsSync(file));
  return [path.join(REPO_ROOT, 'README.md'), ...docs, ...packageReadmes];
}
const DOCUMENTS = documents();

/** The text outside fenced code blocks and inline code, line by line (line numbers kept). */
function proseLines(markdown: string): string[] {
  let fenced = false;
  return markdown.split('\n').map((line) => {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      return '';
    }
    return fenced ? '' : line.replace(/`[^`]*`/g, '``');
  });
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading?.[1]) continue;
    const slug = heading[1]
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

interface Link {
  file: string;
  line: number;
  target: string;
}

function linksOf(file: string): Link[] {
  const links: Link[] = [];
  proseLines(readText(file)).forEach((text, index) => {
    for (const match of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      links.push({ file, line: index + 1, target: match[1] as string });
    }
  });
  return links;
}

/** Why a relative link does not resolve inside the repository, or null when it does. */
function brokenReason(link: Link): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(link.target)) return null; // https:, mailto: ...
  const [pathPart = '', anchor] = link.target.split('#', 2);
  const resolved = pathPart === '' ? link.file : path.resolve(path.dirname(link.file), decodeURI(pathPart));
  const inside = path.relative(REPO_ROOT, resolved);
  if (inside.startsWith('..') || path.isAbsolute(inside)) return 'points outside the repository';
  if (!fs.existsSync(resolved)) return 'no such file';
  if (anchor === undefined) return null;
  if (!resolved.endsWith('.md')) return null;
  return anchorsOf(readText(resolved)).has(anchor) ? null : `no heading #${anchor} in ${relative(resolved)}`;
}

describe('user documents', () => {
  it('finds the documents and their links', () => {
    expect(DOCUMENTS.map(relative)).toEqual(expect.arrayContaining(['README.md', 'docs/api.md', 'docs/semantics.md']));
    expect(linksOf(path.join(REPO_ROOT, 'README.md')).length).toBeGreaterThan(10);
  });

  it('link only to files (and headings) a clone has', () => {
    const broken = DOCUMENTS.flatMap(linksOf)
      .map((link) => ({ link, reason: brokenReason(link) }))
      .filter(({ reason }) => reason !== null)
      .map(({ link, reason }) => `${relative(link.file)}:${link.line} ${link.target}: ${reason}`);
    expect(broken).toEqual([]);
  });

  it('name no path outside the clone', () => {
    const outside = DOCUMENTS.flatMap((file) =>
      readText(file)
        .split('\n')
        .map((text, index) => ({ text, at: `${relative(file)}:${index + 1}` }))
        .filter(({ text }) => /\.\.\/shared\b|\/work\//.test(text))
        .map(({ at }) => at),
    );
    expect(outside).toEqual([]);
  });

  it(`keep the README a newcomer's page (at most ${README_MAX_LINES} lines)`, () => {
    const lines = readText(path.join(REPO_ROOT, 'README.md')).trimEnd().split('\n').length;
    expect(lines).toBeLessThanOrEqual(README_MAX_LINES);
  });

  it('keep no diary: no sessions, no "we tried", dates only on "Measured <date> ... `command`" lines', () => {
    const ORDINAL = '(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|last|\\d+(?:st|nd|rd|th))';
    const diary = [
      new RegExp(`\\b${ORDINAL}\\s+session\\b`, 'i'),
      /\bsession\s+\d+\b/i,
      /\bwe\s+(?:tried|dropped|measured|found|decided)\b/i,
      /\btried and dropped\b/i,
      /\bdropped again\b/i,
    ];
    // A calendar date; an ISO timestamp (an example value, `2026-11-24T01:30:00Z`) is no diary.
    const date = /\b(?:19|20)\d\d-\d\d-\d\d\b(?!T)/;
    const PERFORMANCE = path.join(REPO_ROOT, 'docs/performance.md');
    const found: string[] = [];
    for (const file of DOCUMENTS) {
      readText(file)
        .split('\n')
        .forEach((text, index) => {
          const at = `${relative(file)}:${index + 1}: ${text.trim()}`;
          if (diary.some((pattern) => pattern.test(text))) found.push(at);
          // A figure states when and by which command it was measured; no other line has a date.
          if (date.test(text) && !/^Measured \d{4}-\d\d-\d\d .*`[^`]+`/.test(text)) found.push(at);
        });
    }
    // The figures page describes what is, not what was given up.
    readText(PERFORMANCE)
      .split('\n')
      .forEach((text, index) => {
        if (/\b(?:dropped|tried)\b/i.test(text)) found.push(`docs/performance.md:${index + 1}: ${text.trim()}`);
      });
    expect(found).toEqual([]);
  });

  it('date every figure of performance.md', () => {
    const measured = readText(path.join(REPO_ROOT, 'docs/performance.md'))
      .split('\n')
      .filter((line) => line.startsWith('Measured '));
    expect(measured.length).toBeGreaterThan(0);
    for (const line of measured) expect(line).toMatch(/^Measured \d{4}-\d\d-\d\d .*`[^`]+`/);
  });
});

describe('docs/configuration.md', () => {
  const configuration = readText(path.join(REPO_ROOT, 'docs/configuration.md'));
  const rows = configuration.split('\n').filter((line) => line.startsWith('|'));
  const named = new Set(
    rows.flatMap((row) => [...(row.split('|')[1] ?? '').matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1])),
  );

  it.each([
    ['the gateway', GATEWAY_KEYS],
    ['the indexer', INDEXER_KEYS],
    ['the CLI', CLI_KEYS],
    ['packages/composition', [...Object.keys(domainEnvShape), ...Object.keys(databasePoolEnvShape)]],
    ['packages/webhooks', [...Object.keys(webhookTargetEnvShape), ...Object.keys(webhookDeliveryEnvShape)]],
  ])('has a row for every variable %s reads', (_, keys) => {
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.filter((key) => !named.has(key))).toEqual([]);
  });
});
