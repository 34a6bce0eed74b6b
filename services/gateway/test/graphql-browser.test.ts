import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApiClient, sha256Hex } from '@tms/testkit';
import { type BrowserContext, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../../scripts/generate-schema';
import { type Harness, startHarness } from './harness';

/**
 * GraphiQL in a real browser (Debian's chromium, driven by playwright-core): with DEV_AUTH=1
 * it opens with a working token and an example query; a memory query run from it shows the
 * memory. Needs `apt-get install chromium` (CHROMIUM_PATH overrides /usr/bin/chromium).
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const OUTPUT = path.join(ROOT, 'test-output', 'graphql-browser');

describe('GraphiQL in chromium (pglite, DEV_AUTH=1)', () => {
  let h: Harness;
  let browser: BrowserContext;
  let userDataDir: string;

  beforeAll(async () => {
    if (!fs.existsSync(CHROMIUM)) throw new Error(`no browser at ${CHROMIUM}: apt-get install -y chromium`);
    h = await startHarness({ driver: 'pglite', env: { DEV_AUTH: '1' } });
    userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tms-chromium-'));
    browser = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1400, height: 900 },
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    });
    fs.mkdirSync(OUTPUT, { recursive: true });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await h?.close();
    if (userDataDir) fs.rmSync(userDataDir, { recursive: true, force: true });
  });

  it('opens pre-filled for the dev admin and shows a memory read from it', async () => {
    const devIssuer = h.gateway.devIssuer;
    if (!devIssuer) throw new Error('DEV_AUTH=1 composes a dev issuer');
    const api = new ApiClient(h.url, await devIssuer.sessionToken());
    const ws = (await api.post('/v1/workspaces', { name: 'browser' })).body.workspace.id as string;
    const inWs = api.in(ws);
    const ns = (await inWs.post('/v1/namespaces', { parent_id: null, name: 'people' })).body.namespace;
    const excerpt = 'Ana said she prefers tea over coffee.';
    const evidence = (
      await inWs.post('/v1/evidence', {
        namespace_id: ns.id,
        source_locator: 'chat://demo/1',
        content_root_sha256: sha256Hex(excerpt),
        excerpt,
      })
    ).body.evidence;
    const memory = (
      await inWs.post('/v1/memories', {
        namespace_id: ns.id,
        kind: 'claim',
        text: 'Ana prefers tea.',
        valid_from: 1700000000,
        evidence_ids: [evidence.id],
      })
    ).body.memory;

    const page = browser.pages()[0] ?? (await browser.newPage());
    const run = async () => {
      await page.locator('.graphiql-execute-button').click();
    };
    // What a person sees (innerText: rendered text only); Monaco renders spaces as no-break spaces.
    const visibleText = async (selector: string) =>
      (
        await page.evaluate(
          // biome-ignore lint/performance/useDomNodeTextContent: the rendered text is what is checked.
          (s) => (document.querySelector(s) as HTMLElement | null)?.innerText ?? '',
          selector,
        )
      ).replace(/\u00a0/g, ' ');
    const responseText = () => visibleText('.graphiql-response');
    const pageText = () => visibleText('body');

    // 1. As it opens: the example query, run with the pre-filled dev token.
    await page.goto(`${h.url}/graphql`);
    await page.locator('.graphiql-execute-button').waitFor({ timeout: 60_000 });
    await expect.poll(pageText, { timeout: 30_000 }).toContain('query Example');
    await run();
    await expect.poll(responseText, { timeout: 30_000 }).toContain('"callerKind": "session"');
    expect(await responseText()).toContain('"name": "browser"');

    // 2. A memory query, with the workspace filled in from the address.
    await page.evaluate(() => localStorage.clear());
    const query = `query Memory {
  memory(id: "${memory.id}") {
    knownAt
    view {
      revision { text status }
      evidence { excerpt verifications { edges { node { verdict } } } }
    }
  }
}`;
    await page.goto(`${h.url}/graphql?workspace=${ws}&query=${encodeURIComponent(query)}`);
    await page.locator('.graphiql-execute-button').waitFor({ timeout: 60_000 });
    await expect.poll(pageText, { timeout: 30_000 }).toContain('query Memory');
    await run();
    await expect.poll(responseText, { timeout: 30_000 }).toContain('"text": "Ana prefers tea."');
    expect(await responseText()).toContain(`"excerpt": "${excerpt}"`);
    const screenshot = path.join(OUTPUT, 'graphiql-memory.png');
    await page.screenshot({ path: screenshot });
    expect(fs.statSync(screenshot).size).toBeGreaterThan(10_000);
  }, 180_000);
});
