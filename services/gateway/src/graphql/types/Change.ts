import { ChangeRef, ChangeSubjectRef } from '../refs';

ChangeRef.implement({
  description:
    'One ledger commit as the change feed shows it: the write’s name, who made it and the ids it wrote that the caller may read (never text).',
  fields: (t) => ({
    sequence: t.expose('sequence', { type: 'SafeInt' }),
    recordedAt: t.exposeFloat('recorded_at'),
    operation: t.exposeString('operation', { description: 'The catalog name of the write, e.g. `memories.create`.' }),
    actorId: t.exposeID('actor_id'),
    subjects: t.field({
      type: [ChangeSubjectRef],
      // A commit writes one to three rows.
      complexity: { field: 1, multiplier: 3 },
      resolve: (change) => change.subjects,
    }),
  }),
});
