import { useState } from 'preact/hooks';
import { type Answer, ErrorView, Show, useAnswer } from './answer';
import type { Api, Memory, Namespace, RecallAnswer, Revision } from './api';
import { href } from './route';

interface ListItem {
  memory: Memory;
  revision: Revision;
  stale: boolean;
}

async function loadMemories(api: Api, id: string): Promise<ListItem[]> {
  const items: ListItem[] = [];
  let cursor: string | undefined;
  do {
    const page = await api.get<{ items: ListItem[]; next_cursor: string | null }>('/v1/memories', {
      namespace_id: id,
      limit: 100,
      cursor,
    });
    items.push(...page.items);
    cursor = page.next_cursor ?? undefined;
  } while (cursor && items.length < 1000);
  return items;
}

function Recall(props: { api: Api; ws: string; namespaceId: string }) {
  const [query, setQuery] = useState('');
  const [mode, setMode] = useState('hybrid');
  const [answer, setAnswer] = useState<Answer<RecallAnswer> | null>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    setAnswer({ state: 'loading' });
    try {
      const value = await props.api.post<RecallAnswer>('/v1/recall', {
        query,
        namespace_ids: [props.namespaceId],
        mode,
      });
      setAnswer({ state: 'ok', value });
    } catch (error) {
      setAnswer({ state: 'error', error });
    }
  };
  return (
    <section aria-labelledby="recall-title">
      <h2 id="recall-title">Recall</h2>
      <form onSubmit={submit} class="inline">
        <label>
          Query{' '}
          <input
            type="search"
            value={query}
            required
            onInput={(event) => setQuery((event.target as HTMLInputElement).value)}
            data-testid="recall-query"
          />
        </label>{' '}
        <label>
          Mode{' '}
          <select value={mode} onChange={(event) => setMode((event.target as HTMLSelectElement).value)}>
            <option value="hybrid">hybrid</option>
            <option value="lexical">lexical</option>
            <option value="semantic">semantic</option>
          </select>
        </label>{' '}
        <button type="submit">Recall</button>
      </form>
      {answer && (
        <Show answer={answer}>
          {(value) => (
            <div data-testid="recall-answer">
              <p>
                Status <strong>{value.status}</strong>; mode <strong>{value.retrieval.mode}</strong> (lexical{' '}
                {value.retrieval.lexical}, semantic {value.retrieval.semantic}); indexed through commit{' '}
                <code>#{value.indexed_sequence}</code>; {value.context_chars} characters.
                {value.status === 'partial' ? ' Cut short by a budget: not proof of absence.' : ''}
              </p>
              <table>
                <thead>
                  <tr>
                    <th scope="col">Score</th>
                    <th scope="col">Lexical rank</th>
                    <th scope="col">Semantic rank</th>
                    <th scope="col">Memory</th>
                    <th scope="col">Text</th>
                    <th scope="col">Stale</th>
                  </tr>
                </thead>
                <tbody>
                  {value.items.map((item) => (
                    <tr key={item.memory.id}>
                      <td>{item.score}</td>
                      <td>{item.ranks.lexical ?? '—'}</td>
                      <td>{item.ranks.semantic ?? '—'}</td>
                      <td>
                        <a href={href.memory(props.ws, item.memory.id)}>{item.memory.id}</a>
                      </td>
                      <td>{item.revision.text}</td>
                      <td>{item.stale ? 'stale' : ''}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </Show>
      )}
    </section>
  );
}

export function NamespaceView(props: { api: Api; ws: string; id: string }) {
  const namespace = useAnswer(
    () => props.api.get<{ namespace: Namespace }>(`/v1/namespaces/${encodeURIComponent(props.id)}`),
    [props.api, props.id],
  );
  const memories = useAnswer(() => loadMemories(props.api, props.id), [props.api, props.id]);
  if (namespace.state === 'error') return <ErrorView error={namespace.error} />;
  return (
    <section aria-labelledby="namespace-title">
      <h1 id="namespace-title">
        {namespace.state === 'ok' ? namespace.value.namespace.display_path.join(' / ') : 'Namespace'}{' '}
        <code>{props.id}</code>
      </h1>
      <Recall api={props.api} ws={props.ws} namespaceId={props.id} />
      <h2>Memories now</h2>
      <Show answer={memories}>
        {(items) =>
          items.length === 0 ? (
            <p>No memory is current here now.</p>
          ) : (
            <table data-testid="memories">
              <thead>
                <tr>
                  <th scope="col">Memory</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Text</th>
                  <th scope="col">Status</th>
                  <th scope="col">Stale</th>
                  <th scope="col">Attested</th>
                </tr>
              </thead>
              <tbody>
                {items.map((item) => (
                  <tr key={item.memory.id}>
                    <td>
                      <a href={href.memory(props.ws, item.memory.id)}>{item.memory.id}</a>
                    </td>
                    <td>{item.memory.kind}</td>
                    <td>{item.revision.text}</td>
                    <td>{item.revision.status}</td>
                    <td>{item.stale ? 'stale' : ''}</td>
                    <td>{item.revision.attestation ? 'attested' : ''}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Show>
    </section>
  );
}
