import { useState } from 'preact/hooks';
import { type Answer, ErrorView, Show, useAnswer } from './answer';
import { type Api, ApiError, type MemoryRead, pathWithQuery, type Revision } from './api';
import { type PurgedMemory, purgeBands } from './history';
import { href } from './route';
import { type Point, PurgedTimeline, Timeline, TimelineTable } from './timeline';
import { When } from './when';
import { commitsNaming } from './workspace';

interface Purge extends PurgedMemory {
  /** Whether the whole change feed was read. */
  complete: boolean;
}

type Loaded =
  | { kind: 'history'; revisions: Revision[]; causes: Map<string, string> }
  | { kind: 'purged'; purge: Purge }
  | { kind: 'absent'; error: unknown };

async function loadHistory(api: Api, id: string): Promise<Revision[]> {
  const revisions: Revision[] = [];
  let cursor: string | undefined;
  do {
    const page = await api.get<{ revisions: Revision[]; next_cursor: string | null }>(
      `/v1/memories/${encodeURIComponent(id)}/history`,
      { limit: 100, cursor },
    );
    revisions.push(...page.revisions);
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return revisions;
}

/** The memory each invalidation's cause revision belongs to (GraphQL resolves a revision by id there). */
async function loadCauses(api: Api, id: string, revisions: Revision[]): Promise<Map<string, string>> {
  const causes = new Map<string, string>();
  if (!revisions.some((r) => r.invalidation)) return causes;
  const { data } = await api.graphql<{
    memoryHistory: {
      edges: { node: { invalidation: { causeRevision: { id: string; memoryId: string } | null } | null } }[];
    } | null;
  }>(
    `query ConsoleCauses($id: ID!) { memoryHistory(id: $id, first: 100) { edges { node { invalidation { causeRevision { id memoryId } } } } } }`,
    { id },
  );
  for (const edge of data.memoryHistory?.edges ?? []) {
    const cause = edge.node.invalidation?.causeRevision;
    if (cause) causes.set(cause.id, cause.memoryId);
  }
  return causes;
}

/**
 * A purged memory has no history to read; the change feed still names the commits that wrote its
 * revisions and the purge's receipt. Each revision's band runs from the commit that wrote it to the
 * next commit that ended it (a correction, an attestation, a retraction or the purge).
 */
async function loadPurge(api: Api, id: string): Promise<Purge | null> {
  const { changes, complete } = await commitsNaming(api, id);
  const found = purgeBands(changes);
  return found ? { ...found, complete } : null;
}

async function load(api: Api, id: string): Promise<Loaded> {
  try {
    const revisions = await loadHistory(api, id);
    return { kind: 'history', revisions, causes: await loadCauses(api, id, revisions) };
  } catch (error) {
    if (!(error instanceof ApiError) || error.code !== 'not_found') throw error;
    const purge = await loadPurge(api, id);
    return purge ? { kind: 'purged', purge } : { kind: 'absent', error };
  }
}

/** What `memories.get` answers at the crosshair, with the call that reproduces it. */
function PointView(props: { api: Api; ws: string; id: string; point: Point }) {
  const call = pathWithQuery(`/v1/memories/${encodeURIComponent(props.id)}`, {
    as_of: props.point.asOf,
    known_at: props.point.knownAt,
    include_evidence: true,
  });
  const answer: Answer<MemoryRead> = useAnswer(() => props.api.get<MemoryRead>(call), [props.api, call]);
  return (
    <section class="point" aria-labelledby="point-title" aria-live="polite">
      <h2 id="point-title">At the crosshair</h2>
      <p>
        as_of <When at={props.point.asOf} />, known_at <When at={props.point.knownAt} />
      </p>
      <p>
        Reproduce: <code data-testid="point-call">GET {call}</code>
        <br />
        <code class="curl">
          curl -s "$TMS_URL{call}" -H "Authorization: Bearer $TOKEN" -H "X-Service-Workspace: {props.ws}"
        </code>
      </p>
      {answer.state === 'loading' && <p class="loading">Loading…</p>}
      {answer.state === 'error' && (
        <div data-testid="point-answer" data-status={answer.error instanceof ApiError ? answer.error.status : 0}>
          <p>Nothing is shown at this point: the service answered</p>
          <pre>
            {JSON.stringify(answer.error instanceof ApiError ? answer.error.body : String(answer.error), null, 2)}
          </pre>
        </div>
      )}
      {answer.state === 'ok' && (
        <div data-testid="point-answer" data-status={200}>
          <p>
            Generation {answer.value.view.revision.generation}, {answer.value.view.revision.status}
            {answer.value.view.stale ? ', stale' : ''}: <q>{answer.value.view.revision.text}</q>
          </p>
          <ul>
            {answer.value.view.evidence.map((evidence) => (
              <li key={evidence.id}>
                evidence <a href={href.evidence(props.ws, evidence.id)}>{evidence.id}</a> from{' '}
                <code>{evidence.source_locator}</code>
              </li>
            ))}
          </ul>
          <details>
            <summary>The whole answer</summary>
            <pre data-testid="point-json">{JSON.stringify(answer.value, null, 2)}</pre>
          </details>
        </div>
      )}
    </section>
  );
}

export function MemoryView(props: { api: Api; ws: string; id: string }) {
  const loaded = useAnswer(() => load(props.api, props.id), [props.api, props.id]);
  // The app keys this view by memory id: another memory starts without a crosshair.
  const [point, setPoint] = useState<Point | null>(null);
  return (
    <section aria-labelledby="memory-title">
      <h1 id="memory-title">
        Memory <code>{props.id}</code>
      </h1>
      <Show answer={loaded}>
        {(value) => {
          if (value.kind === 'absent') return <ErrorView error={value.error} />;
          if (value.kind === 'purged') {
            const { purge } = value;
            return (
              <div data-testid="purged">
                <p>
                  <strong>Purged</strong> by commit <code>#{purge.commit.sequence}</code> (
                  <code>{purge.commit.actor_id}</code>, <When at={purge.commit.recorded_at} />
                  ); receipt <code data-testid="receipt-id">{purge.receiptId}</code>. Its text is erased at every
                  known_at; the receipt proves what was erased, by hash only.
                  {purge.complete ? '' : ' (The change feed was read in part only.)'}
                </p>
                <PurgedTimeline bands={purge.bands} purgedAt={purge.commit.recorded_at} />
              </div>
            );
          }
          const namespace = value.revisions[0]?.namespace_id;
          const causeHref = (revisionId: string) => {
            const memoryId = value.causes.get(revisionId);
            return memoryId ? href.memory(props.ws, memoryId) : null;
          };
          const evidenceIds = [...new Set(value.revisions.flatMap((r) => r.evidence_ids))];
          return (
            <>
              {namespace && (
                <p>
                  In namespace <a href={href.namespace(props.ws, namespace)}>{namespace}</a>; {value.revisions.length}{' '}
                  revision{value.revisions.length === 1 ? '' : 's'}. Evidence cited:{' '}
                  {evidenceIds.length === 0
                    ? 'none'
                    : evidenceIds.map((id) => (
                        <a key={id} href={href.evidence(props.ws, id)} class="chip">
                          {id}
                        </a>
                      ))}
                </p>
              )}
              <Timeline revisions={value.revisions} point={point} onPick={setPoint} causeHref={causeHref} />
              {point && <PointView api={props.api} ws={props.ws} id={props.id} point={point} />}
              <h2>Revisions</h2>
              <TimelineTable revisions={value.revisions} causeHref={causeHref} />
            </>
          );
        }}
      </Show>
    </section>
  );
}
