import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { integer, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { describe, expect, it } from 'vitest';
import { lintDistribution, TABLE_PLACEMENT, tablesOf } from '../src/distribution';

const LEDGER = join(import.meta.dirname, '..');
const REPO = join(LEDGER, '../..');

/** Every migration statement and every SQL template in the packages' and services' sources. */
function statementsToLint(): string[] {
  const statements: string[] = [];
  const migrations = join(LEDGER, 'drizzle');
  for (const file of readdirSync(migrations).filter((f) => f.endsWith('.sql'))) {
    statements.push(...readFileSync(join(migrations, file), 'utf8').split('--> statement-breakpoint'));
  }
  for (const root of ['packages', 'services']) {
    for (const unit of readdirSync(join(REPO, root))) {
      const src = join(REPO, root, unit, 'src');
      let entries: string[] = [];
      try {
        entries = readdirSync(src, { recursive: true, encoding: 'utf8' });
      } catch {
        continue;
      }
      for (const entry of entries.filter((e) => e.endsWith('.ts'))) {
        // Template literals: the odd pieces between backticks.
        const pieces = readFileSync(join(src, entry), 'utf8').split('`');
        for (let i = 1; i < pieces.length; i += 2) statements.push(pieces[i] as string);
      }
    }
  }
  return statements;
}

describe('distribution lint', () => {
  it('passes on the ledger schema, its migrations and its SQL', () => {
    const statements = statementsToLint();
    expect(statements.length).toBeGreaterThan(100);
    expect(lintDistribution(tablesOf(), TABLE_PLACEMENT, statements)).toEqual([]);
  });

  it('places every table exactly once', () => {
    const names = tablesOf().map((t) => (t as unknown as { [k: symbol]: string })[Symbol.for('drizzle:Name')]);
    expect(new Set(names).size).toBe(names.length);
    expect(Object.keys(TABLE_PLACEMENT).sort()).toEqual([...names].sort());
  });

  it('fails on a deliberately bad table', () => {
    const notes = pgTable(
      'notes',
      { workspaceId: text('workspace_id').notNull(), id: text('id').primaryKey(), slug: text('slug').notNull() },
      (t) => [uniqueIndex('notes_slug').on(t.slug)],
    );
    const tags = pgTable('tags', {
      id: text('id').primaryKey(),
      noteId: text('note_id').references(() => notes.id),
    });
    const loose = pgTable('loose', { n: integer('n') }, (t) => [primaryKey({ columns: [t.n] })]);
    const problems = lintDistribution([notes, tags, loose], { notes: 'distributed', tags: 'reference' }, [
      'CREATE TRIGGER notes_touch BEFORE UPDATE ON "notes" FOR EACH ROW EXECUTE FUNCTION touch()',
      'LOCK TABLE notes IN EXCLUSIVE MODE',
      'select * from notes where id = $1 for update',
      'select * from notes where workspace_id = $1 and id = $2 for update',
    ]);
    expect(problems).toEqual([
      'notes: key notes_pkey (id) lacks workspace_id',
      'notes: key notes_slug (slug) lacks workspace_id',
      'tags: reference table with a foreign key to distributed notes',
      'loose: no placement (distributed, reference or local)',
      'trigger on distributed notes: CREATE TRIGGER notes_touch BEFORE UPDATE ON "notes" FOR EACH ROW EXECUTE FUNCTION touch()',
      'table lock on distributed notes: LOCK TABLE notes IN EXCLUSIVE MODE',
      'FOR UPDATE without a workspace_id equality: select * from notes where id = $1 for update',
    ]);
  });
});
