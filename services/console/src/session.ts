/** The signed-in token: pasted once and kept in this tab's sessionStorage, or the dev token the page carries. */

const TOKEN_KEY = 'tms.console.token';

interface PageConfig {
  devToken: string | null;
}

function pageConfig(): PageConfig {
  const element = document.getElementById('console-config');
  try {
    return JSON.parse(element?.textContent ?? '{}') as PageConfig;
  } catch {
    return { devToken: null };
  }
}

/** The tab's token; the dev token (DEV_AUTH=1) until this tab signs in or out itself. */
export function storedToken(): string | null {
  const stored = sessionStorage.getItem(TOKEN_KEY);
  if (stored !== null) return stored || null;
  return pageConfig().devToken ?? null;
}

export function devToken(): string | null {
  return pageConfig().devToken ?? null;
}

export function signIn(token: string): void {
  sessionStorage.setItem(TOKEN_KEY, token);
}

/** Signed out in this tab: the dev token is no longer used either, until chosen again. */
export function signOut(): void {
  sessionStorage.setItem(TOKEN_KEY, '');
}
