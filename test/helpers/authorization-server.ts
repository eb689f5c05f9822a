/**
 * A real OAuth 2.0 authorization server (oidc-provider 9, in memory) for tests that need a provider on
 * the other side: authorization code + PKCE (S256), rotating refresh tokens, RFC 7009 revocation,
 * RFC 7662 introspection, a scripted end user (approve), switchable token-endpoint failures, and a
 * switchable Cross-Origin-Opener-Policy on its pages (as Google's and Microsoft's sign-in pages send).
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

type GrantType = 'authorization_code' | 'refresh_token';
type Mode = 'normal' | 'hang' | 'unavailable' | 'invalid_grant';

export interface AuthorizationServer {
  issuer: string;
  authorizationUrl: string;
  tokenUrl: string;
  revocationUrl: string;
  introspectionUrl: string;
  clients: { basic: { id: string; secret: string }; post: { id: string; secret: string } };
  /** Token endpoint calls that succeeded (oidc-provider's grant.success), by grant_type. */
  grants: Record<GrantType, number>;
  /** Every token endpoint request received (even failed or hung ones), by grant_type. */
  tokenRequests: Record<GrantType, number>;
  /** What the token endpoint does from now on, until changed: answer normally, hang until the socket
   * closes, answer 503 text, or refuse with 400 {"error":"invalid_grant"}. */
  tokenEndpoint: Mode;
  /** The Cross-Origin-Opener-Policy every answer carries from now on, until changed; null (the default)
   * sends none. 'same-origin' puts a popup showing these pages in a browsing context group of its own,
   * as a provider's sign-in page that sends it does: its opener then sees it closed, and once it comes
   * back to another origin its window.opener is null. */
  openerPolicy: 'same-origin' | null;
  /** RFC 7662 introspection of a token, authenticated as the `basic` client: returns `active`. */
  isActive(token: string): Promise<boolean>;
  /** Revokes the token's whole grant at the server (every access and refresh token of it), as a user
   * revoking the app would; throws if the server does not know the token. */
  revoke(token: string): Promise<void>;
  /** Plays the end user's browser from an authorization URL: signs in as accountId (default 'user-1'),
   * consents (or denies), carrying cookies, and returns the redirect back to redirect_uri, NOT followed.
   * Throws, with status and the start of the body, on anything else. */
  approve(authorizationUrl: string, options?: { accountId?: string; deny?: boolean }): Promise<URL>;
  close(): Promise<void>;
}

// oidc-provider and koa ship no type declarations (and @types/* are not installed): the little we touch.
export interface Ctx {
  method: string;
  path: string;
  req: IncomingMessage;
  res: ServerResponse;
  status: number;
  type: string;
  body: unknown;
  respond: boolean;
  oidc?: any;
  redirect(url: string): void;
}
export interface Provider {
  use(fn: (ctx: Ctx, next: () => Promise<void>) => Promise<void>): void;
  on(event: string, fn: (ctx: Ctx) => void): void;
  callback(): (req: IncomingMessage, res: ServerResponse) => void;
  interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<any>;
  interactionResult(req: IncomingMessage, res: ServerResponse, result: object, opts?: object): Promise<string>;
  silent: boolean;
  Grant: any;
  AccessToken: any;
  RefreshToken: any;
  AuthorizationCode: any;
}
/**
 * The consent a test's person always gives: a grant (the interaction's, or a new one) for the scopes
 * and claims the prompt is missing. Non-openid scopes such as api:read are "OIDC scopes" to the Grant
 * API (resource indicators unused).
 */
export async function grantConsent(provider: Provider, details: any): Promise<{ consent: { grantId: string } }> {
  const grant = details.grantId
    ? await provider.Grant.find(details.grantId)
    : new provider.Grant({ accountId: details.session.accountId, clientId: details.params.client_id });
  const { missingOIDCScope, missingOIDCClaims } = details.prompt.details;
  if (missingOIDCScope) grant.addOIDCScope(missingOIDCScope.join(' '));
  if (missingOIDCClaims) grant.addOIDCClaims(missingOIDCClaims);
  return { consent: { grantId: await grant.save() } };
}

interface OidcProviderModule {
  default: new (issuer: string, configuration: object) => Provider;
  errors: { InvalidRequest: new (description: string) => Error };
}

let loading: Promise<OidcProviderModule> | undefined;
/** Imported once, lazily, to swallow the one "Unsupported runtime" warning oidc-provider prints on Node 20. */
export function loadOidcProvider(): Promise<OidcProviderModule> {
  loading ??= (async () => {
    const warn = console.warn;
    console.warn = (...args: unknown[]) => {
      if (!String(args[0]).includes('oidc-provider WARNING: Unsupported runtime')) warn.apply(console, args);
    };
    const specifier = 'oidc-provider'; // a variable, so tsc does not look for the missing declarations
    try {
      return (await import(specifier)) as OidcProviderModule;
    } finally {
      console.warn = warn;
    }
  })();
  return loading;
}

/**
 * Per-server in-memory storage. oidc-provider's own MemoryAdapter warns on stderr when used and is an
 * LRU capped at 1000 entries, which a long test file can overflow (tokens silently evicted).
 */
export function memoryAdapter() {
  const store = new Map<string, { payload: any; expiresAt: number }>();
  const live = (key: string) => {
    const entry = store.get(key);
    if (entry && entry.expiresAt > Date.now()) return entry.payload;
    store.delete(key); // expired (or absent)
    return undefined;
  };
  const keysWhere = (model: string, field: string, value: unknown) =>
    [...store].filter(([key, { payload }]) => key.startsWith(`${model}:`) && payload[field] === value).map(([key]) => key);
  return (model: string) => ({
    async upsert(id: string, payload: object, expiresIn?: number) {
      store.set(`${model}:${id}`, { payload, expiresAt: expiresIn ? Date.now() + expiresIn * 1000 : Infinity });
    },
    async find(id: string) {
      return live(`${model}:${id}`);
    },
    async findByUid(uid: string) {
      const [key] = keysWhere(model, 'uid', uid);
      return key && live(key);
    },
    async findByUserCode(code: string) {
      const [key] = keysWhere(model, 'userCode', code);
      return key && live(key);
    },
    async consume(id: string) {
      const payload = live(`${model}:${id}`);
      if (payload) payload.consumed = Math.floor(Date.now() / 1000);
    },
    async destroy(id: string) {
      store.delete(`${model}:${id}`);
    },
    async revokeByGrantId(grantId: string) {
      for (const key of keysWhere(model, 'grantId', grantId)) store.delete(key);
    },
  });
}

async function readBody(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

export async function startAuthorizationServer(options: {
  redirectUri: string; // exact; registered on both clients
  accessTokenTtlSeconds?: number; // default 3600
}): Promise<AuthorizationServer> {
  const { default: ProviderClass, errors } = await loadOidcProvider();
  // The issuer must contain the port, so listen first and attach the provider afterwards.
  const httpServer = createServer();
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}`;

  const secret = () => randomBytes(24).toString('base64url');
  const clients = { basic: { id: 'keyward-basic', secret: secret() }, post: { id: 'keyward-post', secret: secret() } };
  const client = (c: { id: string; secret: string }, method: string) => ({
    client_id: c.id,
    client_secret: c.secret,
    token_endpoint_auth_method: method,
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    redirect_uris: [options.redirectUri],
  });
  // Our own key (RS256 is every client's default id_token alg): otherwise oidc-provider warns about its dev keys.
  const signingKey = { ...generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }), use: 'sig', kid: 'test' };

  const provider = new ProviderClass(issuer, {
    adapter: memoryAdapter(),
    jwks: { keys: [signingKey] },
    clients: [client(clients.basic, 'client_secret_basic'), client(clients.post, 'client_secret_post')],
    scopes: ['openid', 'offline_access', 'api:read', 'api:write'],
    pkce: { required: () => true }, // only S256 is accepted by oidc-provider 9
    // Every confidential client allowed the grant gets a refresh token, with or without offline_access,
    // and tokens do not die with the (scripted) browser session.
    issueRefreshToken: async (_ctx: unknown, c: any) => c.grantTypeAllowed('refresh_token'),
    expiresWithSession: async () => false,
    rotateRefreshToken: true,
    findAccount: async (_ctx: unknown, sub: string) => ({ accountId: sub, claims: async () => ({ sub }) }),
    // Explicit TTLs and error page: the defaults log a "you SHOULD change it" notice when first used.
    ttl: {
      AccessToken: options.accessTokenTtlSeconds ?? 3600,
      AuthorizationCode: 60,
      IdToken: 3600,
      RefreshToken: 14 * 86400,
      Interaction: 3600,
      Session: 14 * 86400,
      Grant: 14 * 86400,
    },
    renderError: async (ctx: Ctx, out: object) => {
      ctx.body = out;
    }, // JSON: approve() quotes it in its errors
    features: {
      devInteractions: { enabled: false },
      introspection: { enabled: true, allowedPolicy: async () => true },
      // Same rule as the default policy (a client revokes only its own tokens), without its notice.
      revocation: {
        enabled: true,
        allowedPolicy: async (_ctx: unknown, c: any, token: any) => {
          if (token.clientId === c.clientId) return true;
          throw new errors.InvalidRequest('client is not authorized to revoke the presented token');
        },
      },
    },
  });
  provider.silent = true; // koa: do not print errors thrown by middleware

  // oidc-provider's default routes.
  const server: AuthorizationServer = {
    issuer,
    authorizationUrl: `${issuer}/auth`,
    tokenUrl: `${issuer}/token`,
    revocationUrl: `${issuer}/token/revocation`,
    introspectionUrl: `${issuer}/token/introspection`,
    clients,
    grants: { authorization_code: 0, refresh_token: 0 },
    tokenRequests: { authorization_code: 0, refresh_token: 0 },
    tokenEndpoint: 'normal',
    openerPolicy: null,
    isActive,
    revoke,
    approve,
    close,
  };
  const count = (into: Record<GrantType, number>, grantType: unknown) => {
    if (grantType === 'authorization_code' || grantType === 'refresh_token') into[grantType] += 1;
  };
  provider.on('grant.success', (ctx) => count(server.grants, ctx.oidc?.params?.grant_type));

  provider.use(async (ctx, next) => {
    if (server.openerPolicy) ctx.res.setHeader('cross-origin-opener-policy', server.openerPolicy);
    await next();
  });

  provider.use(async (ctx, next) => {
    if (ctx.method !== 'POST' || ctx.path !== '/token') return next();
    const mode = server.tokenEndpoint;
    if (mode === 'normal') {
      // The body is parsed by oidc-provider inside next(); count afterwards, even when the request failed.
      try {
        await next();
      } finally {
        count(server.tokenRequests, ctx.oidc?.params?.grant_type ?? ctx.oidc?.body?.grant_type);
      }
      return;
    }
    count(server.tokenRequests, (await readBody(ctx.req)).get('grant_type'));
    if (mode === 'hang') {
      ctx.respond = false; // never answer; close() or the client giving up ends it
      if (!ctx.res.destroyed) await new Promise((resolve) => ctx.res.once('close', resolve));
    } else if (mode === 'unavailable') {
      ctx.status = 503;
      ctx.type = 'text';
      ctx.body = 'Service Unavailable';
    } else {
      ctx.status = 400;
      ctx.body = { error: 'invalid_grant', error_description: 'grant refused by the test (tokenEndpoint = invalid_grant)' };
    }
  });

  // Interactions as a tiny JSON "UI": GET shows the pending prompt; POST answers it (accountId / decision).
  provider.use(async (ctx, next) => {
    if (!/^\/interaction\/[^/]+$/.test(ctx.path)) return next();
    try {
      const details = await provider.interactionDetails(ctx.req, ctx.res);
      const prompt: string = details.prompt.name;
      if (ctx.method === 'GET') {
        ctx.body = { uid: details.uid, prompt };
        return;
      }
      const form = await readBody(ctx.req);
      let result: object;
      if (prompt === 'login') {
        result = { login: { accountId: form.get('accountId') || 'user-1' } };
      } else if (prompt === 'consent' && form.get('decision') === 'deny') {
        result = { error: 'access_denied', error_description: 'The user denied access' };
      } else if (prompt === 'consent') {
        result = await grantConsent(provider, details);
      } else {
        throw new Error(`unexpected prompt ${prompt}`);
      }
      ctx.status = 303;
      ctx.redirect(await provider.interactionResult(ctx.req, ctx.res, result, { mergeWithLastSubmission: false }));
    } catch (error) {
      ctx.status = (error as { status?: number }).status ?? 500;
      ctx.body = { error: 'interaction_failed', message: (error as Error).message };
    }
  });

  httpServer.on('request', provider.callback());

  async function isActive(token: string): Promise<boolean> {
    const authorization = `Basic ${Buffer.from(`${clients.basic.id}:${clients.basic.secret}`).toString('base64')}`;
    const response = await fetch(server.introspectionUrl, { method: 'POST', headers: { authorization }, body: new URLSearchParams({ token }) });
    if (response.status !== 200) throw new Error(`introspection answered ${response.status}: ${await response.text()}`);
    return ((await response.json()) as { active: boolean }).active;
  }

  async function revoke(token: string): Promise<void> {
    const found = (await provider.RefreshToken.find(token, { ignoreExpiration: true })) ?? (await provider.AccessToken.find(token, { ignoreExpiration: true }));
    if (!found) throw new Error('revoke(): the server knows no such access or refresh token');
    // What oidc-provider's own revocation endpoint does: every token of the grant, then the grant itself.
    const models = [provider.AccessToken, provider.RefreshToken, provider.AuthorizationCode];
    await Promise.all([...models.map((model) => model.revokeByGrantId(found.grantId)), provider.Grant.adapter.destroy(found.grantId)]);
  }

  async function approve(authorizationUrl: string, opts: { accountId?: string; deny?: boolean } = {}): Promise<URL> {
    const jar = new Map<string, { name: string; value: string; path: string }>(); // key: name + path
    let url = new URL(authorizationUrl);
    let post: URLSearchParams | undefined;
    for (let hop = 0; hop < 20; hop += 1) {
      if (url.origin !== issuer) throw new Error(`approve(): left the authorization server for ${url.href}`);
      const cookie = [...jar.values()]
        .filter((c) => url.pathname === c.path || url.pathname.startsWith(c.path.endsWith('/') ? c.path : `${c.path}/`))
        .map((c) => `${c.name}=${c.value}`)
        .join('; ');
      // A URLSearchParams body sets the form content-type itself.
      const response = await fetch(url, { method: post ? 'POST' : 'GET', redirect: 'manual', headers: cookie ? { cookie } : {}, body: post });
      post = undefined;
      for (const header of response.headers.getSetCookie()) {
        const [pair = '', ...attributes] = header.split(';').map((part) => part.trim());
        const name = pair.slice(0, pair.indexOf('='));
        const attribute = (key: string) => attributes.find((a) => a.toLowerCase().startsWith(`${key}=`))?.slice(key.length + 1);
        const path = attribute('path') ?? '/';
        const expires = attribute('expires');
        if (attribute('max-age') === '0' || (expires && Date.parse(expires) <= Date.now())) jar.delete(`${name};${path}`);
        else jar.set(`${name};${path}`, { name, value: pair.slice(name.length + 1), path });
      }
      const location = response.headers.get('location');
      if (response.status >= 300 && response.status < 400 && location) {
        await response.body?.cancel();
        const next = new URL(location, url);
        if (next.href.startsWith(options.redirectUri)) return next;
        url = next;
        continue;
      }
      const text = await response.text();
      const page = response.status === 200 && url.pathname.startsWith('/interaction/') ? (JSON.parse(text) as { prompt?: string }) : {};
      if (page.prompt === 'login') post = new URLSearchParams({ accountId: opts.accountId ?? 'user-1' });
      else if (page.prompt === 'consent') post = new URLSearchParams({ decision: opts.deny ? 'deny' : 'allow' });
      else throw new Error(`approve(): unexpected ${response.status} from ${url.href}: ${text.slice(0, 300)}`);
    }
    throw new Error('approve(): too many redirects');
  }

  async function close(): Promise<void> {
    const closed = new Promise<void>((resolve, reject) => httpServer.close((error) => (error ? reject(error) : resolve())));
    httpServer.closeAllConnections(); // keep-alive and hung token requests, or close() would wait for them
    await closed;
  }

  return server;
}
