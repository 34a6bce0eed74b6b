import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, {
  type Adapter,
  type AdapterFactory,
  type AdapterPayload,
  type ClientMetadata,
  type Configuration,
} from 'oidc-provider';
import { ALL_SCOPES } from './issuer';

/** The OAuth resource (and so the access-token `aud`) our service is, unless `start` says otherwise. */
export const OIDC_TEST_AUDIENCE = 'urn:tms:test:api';
/** The confidential client that gets access tokens by client_credentials. */
export const OIDC_SERVICE_CLIENT = 'tms-test-service';
/** The confidential client humans sign in through; ID tokens carry it as `aud`. */
export const OIDC_WEB_CLIENT = 'tms-test-web';

export interface OidcTestProviderOptions {
  /** The resource indicator our service answers to; access tokens for it carry it as `aud`. */
  audience?: string;
}

export interface AccessTokenOptions {
  /** Space-separated scopes to request; omitted, the token carries no `scope` claim. */
  scope?: string;
  /** The client to authenticate as; it becomes the token's `sub`. Unknown ids are registered on first use. */
  clientId?: string;
  /** The resource to request the token for (its `aud`); defaults to our audience. */
  resource?: string;
}

interface Discovery {
  issuer: string;
  jwks_uri: string;
  token_endpoint: string;
  authorization_endpoint: string;
}

type Entry = { payload: AdapterPayload; expiresAt: number | null };

/**
 * A Map-backed oidc-provider adapter. Ours rather than the bundled one because the bundled
 * store is process-global, and because the store must outlive a Provider instance: key rotation
 * swaps the instance, and clients registered on the fly must stay known.
 */
function memoryAdapter(entries: Map<string, Entry>): AdapterFactory {
  return (model: string): Adapter => {
    const prefix = `${model}:`;
    const live = (key: string): AdapterPayload | undefined => {
      const entry = entries.get(key);
      if (!entry) return undefined;
      if (entry.expiresAt !== null && entry.expiresAt <= Date.now()) {
        entries.delete(key);
        return undefined;
      }
      return entry.payload;
    };
    const findBy = (field: 'uid' | 'userCode', value: string) => {
      for (const [key, entry] of entries) {
        if (key.startsWith(prefix) && entry.payload[field] === value) return live(key);
      }
      return undefined;
    };
    return {
      async upsert(id, payload, expiresIn) {
        entries.set(prefix + id, { payload, expiresAt: expiresIn ? Date.now() + expiresIn * 1000 : null });
      },
      async find(id) {
        return live(prefix + id);
      },
      async findByUid(uid) {
        return findBy('uid', uid);
      },
      async findByUserCode(userCode) {
        return findBy('userCode', userCode);
      },
      async consume(id) {
        const payload = live(prefix + id);
        if (payload) payload.consumed = Math.floor(Date.now() / 1000);
      },
      async destroy(id) {
        entries.delete(prefix + id);
      },
      async revokeByGrantId(grantId) {
        for (const [key, entry] of entries) if (entry.payload.grantId === grantId) entries.delete(key);
      },
    };
  };
}

/** A fresh RS256 signing key as a private JWK (RS256 is oidc-provider's default for ID and access tokens). */
function newSigningKey(): crypto.JsonWebKey {
  const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const kid = `oidc-test-${crypto.randomBytes(6).toString('hex')}`;
  return { ...privateKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' };
}

/** Cookies by name, enough for one authorization-code flow against a single origin. */
class CookieJar {
  private readonly cookies = new Map<string, string>();

  store(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const pair = line.split(';', 1)[0] ?? '';
      const at = pair.indexOf('=');
      if (at < 1) continue;
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1).trim();
      // Koa clears a cookie by re-setting it empty and expired in 1970.
      if (value === '' || /;\s*expires=[^;]*1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

/**
 * A real OpenID provider (panva's oidc-provider) on loopback for tests: tokens come from its
 * token endpoint and are verified through its published JWKS, as in production.
 *
 * - Services: `accessToken()` does a client_credentials grant with a resource indicator, so the
 *   token is an RFC 9068 JWT (`typ: at+jwt`, `aud` = our audience, `scope`).
 * - Humans: `sessionToken()` drives an authorization-code flow with PKCE over HTTP and returns
 *   the ID token (`aud` = the web client id).
 * - Keys: `rotateKeys()` / `retireOldKeys()` swap the Provider behind the same server, so the
 *   issuer and JWKS URI never change while the published key set does.
 */
export class OidcTestProvider {
  private provider!: Provider;
  private handler!: (req: http.IncomingMessage, res: http.ServerResponse) => void;
  /** Private signing keys, newest first: oidc-provider signs with the first matching key. */
  private keys: crypto.JsonWebKey[] = [newSigningKey()];
  private readonly store = new Map<string, Entry>();
  private readonly secret = crypto.randomBytes(24).toString('base64url');
  private readonly cookieKeys = [crypto.randomBytes(32).toString('base64url')];
  private discovery!: Discovery;

  private constructor(
    private readonly server: http.Server,
    private readonly origin: string,
    readonly audience: string,
  ) {}

  static async start(options: OidcTestProviderOptions = {}): Promise<OidcTestProvider> {
    const server = http.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const harness = new OidcTestProvider(server, origin, options.audience ?? OIDC_TEST_AUDIENCE);
    harness.rebuild();
    server.on('request', (req, res) => harness.route(req, res));
    const response = await fetch(`${origin}/.well-known/openid-configuration`);
    if (!response.ok) throw new Error(`oidc-provider discovery answered ${response.status}`);
    harness.discovery = (await response.json()) as Discovery;
    return harness;
  }

  /** The issuer exactly as the provider writes it into `iss`. */
  get issuer(): string {
    return this.discovery.issuer;
  }

  /** The JWKS URI from the discovery document. */
  get jwksUri(): string {
    return this.discovery.jwks_uri;
  }

  /** The audience of session (ID) tokens: the web client's id. */
  get sessionAudience(): string {
    return OIDC_WEB_CLIENT;
  }

  /** Where the web client is redirected with its code; never served, the flow reads `Location`. */
  private get redirectUri(): string {
    return `${this.origin}/callback`;
  }

  /** The operator-contract variables pointing at this provider (one issuer for both token kinds). */
  env(): Record<string, string> {
    return {
      SESSION_ISSUER: this.issuer,
      SESSION_JWKS_URI: this.jwksUri,
      SESSION_AUDIENCE: this.sessionAudience,
      OAUTH_ISSUER: this.issuer,
      OAUTH_JWKS_URI: this.jwksUri,
      OAUTH_AUDIENCE: this.audience,
    };
  }

  /** An RFC 9068 access token from a real client_credentials grant at the token endpoint. */
  async accessToken(options: AccessTokenOptions = {}): Promise<string> {
    const clientId = options.clientId ?? OIDC_SERVICE_CLIENT;
    if (clientId !== OIDC_SERVICE_CLIENT) this.registerServiceClient(clientId);
    const body = new URLSearchParams({ grant_type: 'client_credentials', resource: options.resource ?? this.audience });
    if (options.scope !== undefined) body.set('scope', options.scope);
    const tokens = await this.tokenRequest(clientId, body);
    return tokens.access_token as string;
  }

  /**
   * A human session token: the ID token of an authorization-code flow with PKCE for `subject`.
   * The flow follows the provider's redirects by hand with a cookie jar; the login step is our
   * interaction route, which signs in the `login_hint` and grants the requested scopes.
   */
  async sessionToken(subject: string): Promise<string> {
    const verifier = crypto.randomBytes(32).toString('base64url');
    const state = crypto.randomBytes(12).toString('base64url');
    const start = new URL(this.discovery.authorization_endpoint);
    start.search = new URLSearchParams({
      client_id: OIDC_WEB_CLIENT,
      response_type: 'code',
      scope: 'openid',
      redirect_uri: this.redirectUri,
      state,
      nonce: crypto.randomBytes(12).toString('base64url'),
      code_challenge: crypto.createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
      login_hint: subject,
    }).toString();

    const jar = new CookieJar();
    let url = start.href;
    for (let hop = 0; hop < 10; hop++) {
      const response = await fetch(url, { redirect: 'manual', headers: { cookie: jar.header() } });
      jar.store(response);
      const location = response.headers.get('location');
      if (response.status < 300 || response.status >= 400 || !location) {
        throw new Error(`authorization flow stopped at ${url}: ${response.status} ${await response.text()}`);
      }
      const next = new URL(location, url);
      if (next.origin + next.pathname === this.redirectUri) {
        const error = next.searchParams.get('error');
        if (error) throw new Error(`authorization failed: ${error} ${next.searchParams.get('error_description')}`);
        if (next.searchParams.get('state') !== state) throw new Error('authorization response state mismatch');
        const code = next.searchParams.get('code');
        if (!code) throw new Error('authorization response without code');
        const body = new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          redirect_uri: this.redirectUri,
          code_verifier: verifier,
        });
        const tokens = await this.tokenRequest(OIDC_WEB_CLIENT, body);
        return tokens.id_token as string;
      }
      url = next.href;
    }
    throw new Error('authorization flow did not reach the redirect URI');
  }

  /** Publish a new signing key and sign from now on with it; the previous keys stay published. */
  async rotateKeys(): Promise<void> {
    this.keys = [newSigningKey(), ...this.keys];
    this.rebuild();
  }

  /** Stop publishing every key but the newest: tokens they signed must stop verifying. */
  async retireOldKeys(): Promise<void> {
    this.keys = this.keys.slice(0, 1);
    this.rebuild();
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private async tokenRequest(clientId: string, body: URLSearchParams): Promise<Record<string, unknown>> {
    // client_secret_basic: id and secret are form-encoded before base64 (RFC 6749 §2.3.1).
    const credentials = Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(this.secret)}`);
    const response = await fetch(this.discovery.token_endpoint, {
      method: 'POST',
      headers: { authorization: `Basic ${credentials.toString('base64')}` },
      body,
    });
    const json = (await response.json()) as Record<string, unknown>;
    if (!response.ok) throw new Error(`token endpoint answered ${response.status}: ${JSON.stringify(json)}`);
    return json;
  }

  /** Service clients beyond the static one live in the adapter, which `Client.find` falls back to. */
  private registerServiceClient(clientId: string): void {
    const key = `Client:${clientId}`;
    if (this.store.has(key)) return;
    this.store.set(key, { payload: this.serviceClient(clientId), expiresAt: null });
  }

  private serviceClient(clientId: string): ClientMetadata {
    return {
      client_id: clientId,
      client_secret: this.secret,
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: 'client_secret_basic',
    };
  }

  private route(req: http.IncomingMessage, res: http.ServerResponse): void {
    if (req.url?.startsWith('/interaction/')) {
      this.interact(req, res).catch((error: Error) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(`interaction failed: ${error.message}`);
      });
      return;
    }
    this.handler(req, res);
  }

  /**
   * The provider sends the browser here to log in and consent. Instead of a form, this signs in
   * the subject the test put in `login_hint` and grants what the client asked for, in one step.
   */
  private async interact(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const provider = this.provider;
    const details = await provider.interactionDetails(req, res);
    const accountId = details.session?.accountId ?? details.params.login_hint;
    if (typeof accountId !== 'string' || accountId.length === 0) throw new Error('no login_hint to sign in');
    const grant =
      (details.grantId ? await provider.Grant.find(details.grantId) : undefined) ??
      new provider.Grant({ accountId, clientId: details.params.client_id as string });
    grant.addOIDCScope(String(details.params.scope ?? 'openid'));
    const grantId = await grant.save();
    await provider.interactionFinished(
      req,
      res,
      { login: { accountId }, consent: { grantId } },
      { mergeWithLastSubmission: false },
    );
  }

  /** A Provider over the current keys; requests go to the newest instance from now on. */
  private rebuild(): void {
    const audience = this.audience;
    const configuration: Configuration = {
      adapter: memoryAdapter(this.store),
      jwks: { keys: this.keys as NonNullable<Configuration['jwks']>['keys'] },
      clients: [
        this.serviceClient(OIDC_SERVICE_CLIENT),
        {
          client_id: OIDC_WEB_CLIENT,
          client_secret: this.secret,
          grant_types: ['authorization_code'],
          response_types: ['code'],
          redirect_uris: [this.redirectUri],
          token_endpoint_auth_method: 'client_secret_basic',
        },
      ],
      cookies: { keys: this.cookieKeys },
      findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
      features: {
        devInteractions: { enabled: false },
        clientCredentials: { enabled: true },
        resourceIndicators: {
          enabled: true,
          // Any absolute URI is a resource server whose `aud` is itself, so a test can ask for
          // a token meant for someone else; only ours is what the verifier accepts.
          getResourceServerInfo: (_ctx, resource) => ({
            scope: resource === audience ? ALL_SCOPES : 'other:read',
            audience: resource,
            accessTokenFormat: 'jwt',
            accessTokenTTL: 600,
            jwt: { sign: { alg: 'RS256' } },
          }),
        },
      },
      interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
      pkce: { required: () => true },
      ttl: { AccessToken: 600, ClientCredentials: 600, IdToken: 600, Interaction: 600, Session: 3600, Grant: 3600 },
      // Errors as JSON, so a failing flow says why.
      renderError: (ctx, out) => {
        ctx.type = 'json';
        ctx.body = out;
      },
    };
    const provider = new Provider(this.origin, configuration);
    this.provider = provider;
    this.handler = provider.callback();
  }
}
