import { ChangeSubjectTypeEnum } from '../enums';
import { ChangeSubjectRef } from '../refs';

ChangeSubjectRef.implement({
  description: 'A ledger row a commit wrote, by id, with the namespace it lives in.',
  fields: (t) => ({
    type: t.expose('type', { type: ChangeSubjectTypeEnum }),
    id: t.exposeID('id'),
    namespaceId: t.exposeID('namespace_id', { nullable: true, description: 'Null for workspace-level subjects.' }),
  }),
});
