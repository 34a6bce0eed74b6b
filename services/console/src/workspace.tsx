import { useEffect, useState } from 'preact/hooks';
import { Show, useAnswer } from './answer';
import type { Api, Change, ChangeSubject } from './api';
import { href } from './route';
import { When } from './when';

interface GrantNode {
  capabilities: string[];
  inherit: boolean;
  target: { __typename: string; actorId?: string; productInstallationId?: string; credentialId?: string };
}
interface NamespaceNode {
  id: string;
  name: string;
  parentId: string | null;
  displayPath: string[];
  grants: GrantNode[] | null;
}

const TREE_QUERY = `query ConsoleTree($after: String) {
  namespaces(first: 25, after: $after) {
    edges { node { id name parentId displayPath grants { capabilities inherit target {
      __typename
      ... on ActorGrantTarget { actorId }
      ... on InstallationGrantTarget { productInstallationId }
      ... on CredentialGrantTarget { credentialId }
    } } } }
    pageInfo { hasNextPage endCursor }
  }
}`;

interface TreePage {
  namespaces: { edges: { node: NamespaceNode }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } };
}

/** Every namespace the caller may read (all pages, 25 a page to stay within the query complexity limit), with the grants on those it administers. */
async function loadTree(api: Api): Promise<NamespaceNode[]> {
  const nodes: NamespaceNode[] = [];
  let after: string | null = null;
  for (;;) {
    const { data }: { data: TreePage } = await api.graphql<TreePage>(TREE_QUERY, { after });
    nodes.push(...data.namespaces.edges.map((edge) => edge.node));
    if (!data.namespaces.pageInfo.hasNextPage) return nodes;
    after = data.namespaces.pageInfo.endCursor;
  }
}

function targetText(target: GrantNode['target']): string {
  if (target.actorId) return `actor ${target.actorId}`;
  if (target.productInstallationId) return `installation ${target.productInstallationId}`;
  return `credential ${target.credentialId ?? '?'}`;
}

function Tree(props: { ws: string; nodes: NamespaceNode[]; parent: string | null }) {
  const ids = new Set(props.nodes.map((node) => node.id));
  // A namespace whose parent the caller cannot read is a root of what it sees.
  const children = props.nodes.filter((node) =>
    props.parent === null ? node.parentId === null || !ids.has(node.parentId) : node.parentId === props.parent,
  );
  if (children.length === 0) return null;
  return (
    <ul class="tree">
      {children.map((node) => (
        <li key={node.id} data-namespace-id={node.id}>
          <a href={href.namespace(props.ws, node.id)}>
            {node.parentId !== null && !ids.has(node.parentId) ? node.displayPath.join(' / ') : node.name}
          </a>{' '}
          <code>{node.id}</code>
          {node.grants === null ? (
            <span class="muted"> · grants: visible to its admins only</span>
          ) : (
            <ul class="grants">
              {node.grants.map((grant) => (
                <li key={targetText(grant.target)}>
                  {targetText(grant.target)}: <strong>{grant.capabilities.join(', ')}</strong>
                  {grant.inherit ? ' (and its subtree)' : ' (this namespace only)'}
                </li>
              ))}
            </ul>
          )}
          <Tree ws={props.ws} nodes={props.nodes} parent={node.id} />
        </li>
      ))}
    </ul>
  );
}

const FEED_SUBSCRIPTION = `subscription ConsoleFeed($after: SafeInt) {
  changes(after: $after) {
    nextAfter headSequence
    changes { sequence recordedAt operation actorId subjects { type id namespaceId } }
  }
}`;

/** Commits replayed when the feed opens; older ones are in `GET /v1/changes`. */
const FEED_BACKLOG = 100;

interface FeedChange {
  sequence: number;
  recordedAt: number;
  operation: string;
  actorId: string;
  subjects: { type: string; id: string; namespaceId: string | null }[];
}

function subjectLink(ws: string, subject: { type: string; id: string }): string | null {
  if (subject.type === 'memory') return href.memory(ws, subject.id);
  if (subject.type === 'evidence') return href.evidence(ws, subject.id);
  if (subject.type === 'namespace') return href.namespace(ws, subject.id);
  return null;
}

/** The change feed as it commits (the `changes` subscription over server-sent events), newest first. */
function Feed(props: { api: Api; ws: string }) {
  const [changes, setChanges] = useState<FeedChange[]>([]);
  const [status, setStatus] = useState('connecting…');
  useEffect(() => {
    const abort = new AbortController();
    let after: number | null = null;
    const run = async () => {
      while (!abort.signal.aborted) {
        if (after === null) {
          // Start with the last FEED_BACKLOG commits, not the workspace's whole past.
          try {
            const head = await props.api.get<{ head_sequence: number }>('/v1/changes', { limit: 1 });
            after = Math.max(0, head.head_sequence - FEED_BACKLOG);
          } catch (error) {
            setStatus(`unavailable (${error instanceof Error ? error.message : String(error)}); retrying`);
            await new Promise((resolve) => setTimeout(resolve, 2000));
            continue;
          }
        }
        try {
          setStatus('live');
          await props.api.subscribe(
            FEED_SUBSCRIPTION,
            { after },
            (payload) => {
              const page = (payload.data as { changes?: { nextAfter: number; changes: FeedChange[] } } | undefined)
                ?.changes;
              if (payload.errors?.length) setStatus(`ended: ${JSON.stringify(payload.errors)}`);
              if (!page) return;
              after = page.nextAfter;
              setChanges((old) => [...[...page.changes].reverse(), ...old].slice(0, 200));
            },
            abort.signal,
          );
        } catch (error) {
          if (abort.signal.aborted) return;
          setStatus(`disconnected (${error instanceof Error ? error.message : String(error)}); retrying`);
        }
        await new Promise((resolve) => setTimeout(resolve, 2000));
      }
    };
    void run();
    return () => abort.abort();
  }, [props.api, props.ws]);
  return (
    <section aria-labelledby="feed-title">
      <h2 id="feed-title">
        Changes <small class="muted">({status})</small>
      </h2>
      <ol class="feed" aria-live="polite" data-testid="feed">
        {changes.map((change) => (
          <li key={change.sequence} data-sequence={change.sequence}>
            <code>#{change.sequence}</code> <strong>{change.operation}</strong> by <code>{change.actorId}</code>{' '}
            <When at={change.recordedAt} />
            <ul class="subjects">
              {change.subjects.map((subject) => {
                const link = subjectLink(props.ws, subject);
                return (
                  <li key={`${subject.type}:${subject.id}`}>
                    {subject.type} {link ? <a href={link}>{subject.id}</a> : <code>{subject.id}</code>}
                  </li>
                );
              })}
            </ul>
          </li>
        ))}
      </ol>
    </section>
  );
}

export function WorkspaceView(props: { api: Api; ws: string }) {
  const me = useAnswer(
    () => props.api.get<{ actor: { id: string }; caller_kind: string; scopes: string[] }>('/v1/me'),
    [props.api],
  );
  const tree = useAnswer(() => loadTree(props.api), [props.api]);
  return (
    <div class="columns">
      <section aria-labelledby="tree-title">
        <h1 id="tree-title">
          Workspace <code>{props.ws}</code>
        </h1>
        <Show answer={me}>
          {(value) => (
            <p data-testid="me">
              Signed in as <code>{value.actor.id}</code> ({value.caller_kind}); scopes: {value.scopes.join(', ')}
            </p>
          )}
        </Show>
        <h2>Namespaces you may read</h2>
        <Show answer={tree}>
          {(nodes) => (nodes.length === 0 ? <p>None.</p> : <Tree ws={props.ws} nodes={nodes} parent={null} />)}
        </Show>
      </section>
      <Feed api={props.api} ws={props.ws} />
    </div>
  );
}

/** The feed's commits that name `id` (for a memory the service no longer shows: purged). */
export async function commitsNaming(
  api: Api,
  id: string,
  maxPages = 20,
): Promise<{ changes: Change[]; complete: boolean }> {
  const found: Change[] = [];
  let after = 0;
  for (let page = 0; page < maxPages; page += 1) {
    const answer = await api.get<{ changes: Change[]; next_after: number; head_sequence: number }>('/v1/changes', {
      after,
      limit: 100,
    });
    found.push(...answer.changes.filter((change) => change.subjects.some((s: ChangeSubject) => s.id === id)));
    after = answer.next_after;
    if (after >= answer.head_sequence) return { changes: found, complete: true };
  }
  return { changes: found, complete: false };
}
