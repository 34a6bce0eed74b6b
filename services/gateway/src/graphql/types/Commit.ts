import { CommitRef } from '../refs';

CommitRef.implement({
  description: 'The ledger commit of a write: its per-workspace sequence and server-owned time.',
  fields: (t) => ({
    sequence: t.expose('sequence', { type: 'SafeInt' }),
    recordedAt: t.exposeFloat('recorded_at'),
  }),
});
