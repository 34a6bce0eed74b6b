import { useEffect, useState } from 'preact/hooks';

/** Views live in the address's fragment, so /console stays one cacheable shell. */
export type Route =
  | { view: 'workspaces' }
  | { view: 'workspace'; ws: string }
  | { view: 'namespace'; ws: string; id: string }
  | { view: 'memory'; ws: string; id: string }
  | { view: 'evidence'; ws: string; id: string };

export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  const [w, ws, view, id] = parts;
  if (w !== 'ws' || !ws) return { view: 'workspaces' };
  if (!view || !id) return { view: 'workspace', ws };
  if (view === 'ns') return { view: 'namespace', ws, id };
  if (view === 'memory') return { view: 'memory', ws, id };
  if (view === 'evidence') return { view: 'evidence', ws, id };
  return { view: 'workspace', ws };
}

export const href = {
  workspace: (ws: string) => `#/ws/${encodeURIComponent(ws)}`,
  namespace: (ws: string, id: string) => `#/ws/${encodeURIComponent(ws)}/ns/${encodeURIComponent(id)}`,
  memory: (ws: string, id: string) => `#/ws/${encodeURIComponent(ws)}/memory/${encodeURIComponent(id)}`,
  evidence: (ws: string, id: string) => `#/ws/${encodeURIComponent(ws)}/evidence/${encodeURIComponent(id)}`,
};

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const update = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', update);
    return () => removeEventListener('hashchange', update);
  }, []);
  return route;
}
