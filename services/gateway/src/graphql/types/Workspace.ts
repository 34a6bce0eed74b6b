import { WorkspaceRef } from '../refs';

WorkspaceRef.implement({
  description: 'A workspace (tenant): namespaces, memories and evidence live inside one.',
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    createdAt: t.exposeFloat('created_at'),
  }),
});
