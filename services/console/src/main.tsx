import './console.css';
import { render } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { Show, useAnswer } from './answer';
import { Api } from './api';
import { EvidenceView } from './evidence';
import { MemoryView } from './memory';
import { NamespaceView } from './namespace';
import { href, useRoute } from './route';
import { devToken, signIn, signOut, storedToken } from './session';
import { viewerZone } from './time';
import { WorkspaceView } from './workspace';

function SignIn(props: { onToken: (token: string) => void }) {
  const [token, setToken] = useState('');
  return (
    <section class="sign-in" aria-labelledby="sign-in-title">
      <h1 id="sign-in-title">Sign in</h1>
      <p>
        Paste a bearer token: a session token, an OAuth access token, an installation credential or a service key. It
        stays in this tab only (sessionStorage) and goes to this service only. The console then sees exactly what the
        token may see.
      </p>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          signIn(token.trim());
          props.onToken(token.trim());
        }}
      >
        <label>
          Bearer token{' '}
          <input
            type="password"
            autoComplete="off"
            required
            value={token}
            onInput={(event) => setToken((event.target as HTMLInputElement).value)}
            data-testid="token"
          />
        </label>{' '}
        <button type="submit">Sign in</button>
      </form>
      {devToken() && (
        <p>
          This is the embedded quickstart (DEV_AUTH=1):{' '}
          <button
            type="button"
            onClick={() => {
              const token = devToken() ?? '';
              signIn(token);
              props.onToken(token);
            }}
          >
            Sign in as the dev user
          </button>
        </p>
      )}
    </section>
  );
}

function Workspaces(props: { api: Api }) {
  const answer = useAnswer(
    () => props.api.get<{ workspaces: { id: string; name: string }[] }>('/v1/workspaces', { limit: 100 }),
    [props.api],
  );
  // One workspace: open it (replacing this address, so Back does not bounce here).
  const only = answer.state === 'ok' && answer.value.workspaces.length === 1 ? answer.value.workspaces[0] : undefined;
  useEffect(() => {
    if (only) location.replace(href.workspace(only.id));
  }, [only]);
  return (
    <section aria-labelledby="workspaces-title">
      <h1 id="workspaces-title">Workspaces</h1>
      <Show answer={answer}>
        {(value) => {
          return (
            <ul>
              {value.workspaces.map((ws) => (
                <li key={ws.id}>
                  <a href={href.workspace(ws.id)}>{ws.name}</a> <code>{ws.id}</code>
                </li>
              ))}
            </ul>
          );
        }}
      </Show>
    </section>
  );
}

/** Keys that work on every view: `g` then `w` to the workspace; `/` to the first search field. */
function useShortcuts(ws: string | null) {
  useEffect(() => {
    let pending = false;
    const onKey = (event: KeyboardEvent) => {
      const target = event.target as HTMLElement;
      if (target.closest('input, textarea, select') || event.ctrlKey || event.metaKey || event.altKey) return;
      if (event.key === '/') {
        const search = document.querySelector<HTMLInputElement>('input[type=search]');
        if (search) {
          event.preventDefault();
          search.focus();
        }
      } else if (pending && event.key === 'w' && ws) {
        location.hash = href.workspace(ws);
      }
      pending = event.key === 'g';
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, [ws]);
}

function App() {
  const [token, setToken] = useState(storedToken);
  const route = useRoute();
  const ws = route.view === 'workspaces' ? null : route.ws;
  const api = useMemo(() => (token ? new Api(token, ws) : null), [token, ws]);
  useShortcuts(ws);
  useEffect(() => {
    const main = document.querySelector<HTMLElement>('main');
    main?.focus();
  }, [route]);
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header>
        <nav aria-label="Console">
          <strong>Temporal Memory Service</strong> · <a href="#/">Workspaces</a>
          {ws && (
            <>
              {' '}
              · <a href={href.workspace(ws)}>This workspace</a>
            </>
          )}
          <span class="spacer" />
          <span class="muted">times in {viewerZone()} and Unix seconds</span>
          {token && (
            <button
              type="button"
              onClick={() => {
                signOut();
                setToken(null);
              }}
            >
              Sign out
            </button>
          )}
        </nav>
      </header>
      <main id="main" tabIndex={-1}>
        {!api ? (
          <SignIn onToken={setToken} />
        ) : route.view === 'workspaces' ? (
          <Workspaces api={api} />
        ) : route.view === 'workspace' ? (
          <WorkspaceView api={api} ws={route.ws} />
        ) : route.view === 'namespace' ? (
          <NamespaceView api={api} ws={route.ws} id={route.id} />
        ) : route.view === 'memory' ? (
          <MemoryView key={route.id} api={api} ws={route.ws} id={route.id} />
        ) : (
          <EvidenceView api={api} ws={route.ws} id={route.id} />
        )}
      </main>
    </>
  );
}

const root = document.getElementById('app');
if (root) render(<App />, root);
