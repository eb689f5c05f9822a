/**
 * A real OpenID Connect provider (oidc-provider 9, in memory, on 127.0.0.1) for the single sign-on
 * suites that drive a browser through it (CONTRACT 9): one confidential client (client_secret_basic,
 * PKCE required) whose redirect URI is Keyward's SSO callback, the `openid email` scopes, and ID
 * tokens that carry `email` and `email_verified: true`. Its sign-in is a small HTML page (an "Email"
 * field, prefilled from `login_hint`, and a "Sign in" button) that a browser fills in; consent is given
 * at once. The same email is the same subject every time.
 *
 * For the ID tokens a real provider never sends on purpose (CONTRACT 9's refusals), a test may spoil
 * the next token response's ID token, once: oidc-provider answers as always, and a layer around its
 * token endpoint rewrites `id_token` before the answer leaves. `forged`: the payload names another
 * person, under the original signature (which no longer verifies); `expired` and `wrongAudience`:
 * re-signed with the provider's own published key, so only `exp` (an hour past, beyond any clock
 * tolerance) or `aud` (another client id) is wrong.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type JsonWebKey, randomBytes, sign, verify } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Ctx, grantConsent, loadOidcProvider, memoryAdapter } from './authorization-server.js';

export interface SsoIdentityProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The subject the provider gives an email. */
  subjectOf(email: string): string;
  /**
   * Spoils the ID token of the next token response only (off by default, and again after it):
   * `forged` makes its payload name `forgedEmail` (default impostor@ the same domain) and its subject,
   * under the original signature.
   */
  spoilNextIdToken(how: SpoiledIdToken, options?: { forgedEmail?: string }): void;
  /** The last token response's ID token as oidc-provider issued it, and as it was sent (the same unless spoiled). */
  readonly lastIdToken: { issued: string; sent: string } | undefined;
  /** Whether a JWT's signature verifies with a key the provider publishes (its jwks_uri). */
  verifiesWithPublishedKeys(jwt: string): Promise<boolean>;
  close(): Promise<void>;
}

/** How the next ID token is spoiled: see the header comment. */
export type SpoiledIdToken = 'forged' | 'expired' | 'wrongAudience';

/** The audience a `wrongAudience` ID token names: a client of the provider that is not Keyward. */
export const OTHER_CLIENT_ID = 'another-application';

async function formOf(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

const jwtPart = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const partOf = (encoded: string) => JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8')) as Record<string, unknown>;

/** A JWT's header and payload, and the bytes its signature is over. */
function jwtParts(jwt: string) {
  const [header, payload, signature] = jwt.split('.') as [string, string, string];
  return { header: partOf(header), claims: partOf(payload), signingInput: `${header}.${payload}`, signature: Buffer.from(signature, 'base64url') };
}

/** The ID token spoiled as `how` says, signed (or not) as the header comment says. */
function spoiled(idToken: string, how: SpoiledIdToken, key: JsonWebKey, forgedEmail: string | undefined, subjectOf: (email: string) => string): string {
  const { header, claims } = jwtParts(idToken);
  // oidc-provider's default for ID tokens; anything else would need its own signing here.
  if (header.alg !== 'RS256') throw new Error(`The test provider signs ID tokens with ${String(header.alg)}, not RS256`);
  if (how === 'forged') {
    const email = forgedEmail ?? `impostor@${String(claims.email).split('@')[1]}`;
    const [originalHeader, , originalSignature] = idToken.split('.');
    return [originalHeader, jwtPart({ ...claims, email, sub: subjectOf(email) }), originalSignature].join('.');
  }
  const now = Math.floor(Date.now() / 1000);
  const changed = how === 'expired' ? { iat: now - 2 * 3600, exp: now - 3600 } : { aud: OTHER_CLIENT_ID };
  const signingInput = `${jwtPart(header)}.${jwtPart({ ...claims, ...changed })}`;
  const signature = sign('sha256', Buffer.from(signingInput), createPrivateKey({ key, format: 'jwk' }));
  return `${signingInput}.${signature.toString('base64url')}`;
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function signInPage(uid: string, hint: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Identity provider</title></head><body>
<h1>Sign in to the identity provider</h1>
<form method="post" action="/interaction/${escapeHtml(uid)}">
<label for="email">Email</label> <input id="email" name="email" type="email" value="${escapeHtml(hint)}">
<button type="submit">Sign in</button>
</form></body></html>`;
}

export async function startSsoIdentityProvider(options: { redirectUri: string }): Promise<SsoIdentityProvider> {
  const { default: ProviderClass } = await loadOidcProvider();
  // The issuer holds the port: listen first, attach the provider afterwards.
  const httpServer = createServer();
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}`;
  const clientId = 'keyward-dashboard';
  const clientSecret = randomBytes(24).toString('base64url');
  const emails = new Map<string, string>();
  const subjectOf = (email: string) => `idp-${createHash('sha256').update(email).digest('hex').slice(0, 16)}`;
  const signingKey = { ...generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }), use: 'sig', kid: 'sso-test' };

  const provider = new ProviderClass(issuer, {
    adapter: memoryAdapter(),
    jwks: { keys: [signingKey] },
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        token_endpoint_auth_method: 'client_secret_basic',
        grant_types: ['authorization_code'],
        response_types: ['code'],
        redirect_uris: [options.redirectUri],
      },
    ],
    scopes: ['openid', 'email'],
    claims: { openid: ['sub'], email: ['email', 'email_verified'] },
    // The email claims in the ID token itself, as the big providers put them, not only at userinfo.
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    findAccount: async (_ctx: unknown, sub: string) => ({
      accountId: sub,
      claims: async () => ({ sub, email: emails.get(sub), email_verified: true }),
    }),
    ttl: { AccessToken: 600, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Session: 3600, Grant: 3600 },
    renderError: async (ctx: Ctx, out: object) => {
      ctx.type = 'json';
      ctx.body = out;
    },
    features: { devInteractions: { enabled: false } },
  });
  provider.silent = true;

  // The token endpoint's answer, once oidc-provider has made it and before it is sent: spoiled when asked.
  let spoilNext: { how: SpoiledIdToken; forgedEmail?: string } | undefined;
  let lastIdToken: { issued: string; sent: string } | undefined;
  provider.use(async (ctx, next) => {
    await next();
    const body = ctx.body as { id_token?: unknown } | undefined;
    if (ctx.path !== '/token' || typeof body?.id_token !== 'string') return;
    const issued = body.id_token;
    if (spoilNext) {
      const { how, forgedEmail } = spoilNext;
      spoilNext = undefined;
      body.id_token = spoiled(issued, how, signingKey, forgedEmail, subjectOf);
    }
    lastIdToken = { issued, sent: body.id_token as string };
  });

  provider.use(async (ctx, next) => {
    const match = /^\/interaction\/([^/]+)$/.exec(ctx.path);
    if (!match) return next();
    const details = await provider.interactionDetails(ctx.req, ctx.res);
    const prompt: string = details.prompt.name;
    let result: object;
    if (prompt === 'login' && ctx.method === 'GET') {
      ctx.type = 'html';
      ctx.body = signInPage(details.uid, String(details.params.login_hint ?? ''));
      return;
    }
    if (prompt === 'login') {
      const email = ((await formOf(ctx.req)).get('email') ?? '').trim().toLowerCase();
      emails.set(subjectOf(email), email);
      result = { login: { accountId: subjectOf(email) } };
    } else {
      // Consent given at once: the test's person always agrees.
      result = await grantConsent(provider, details);
    }
    ctx.status = 303;
    ctx.redirect(await provider.interactionResult(ctx.req, ctx.res, result, { mergeWithLastSubmission: false }));
  });
  httpServer.on('request', provider.callback());

  return {
    issuer,
    clientId,
    clientSecret,
    subjectOf,
    spoilNextIdToken(how, options = {}) {
      spoilNext = { how, forgedEmail: options.forgedEmail };
    },
    get lastIdToken() {
      return lastIdToken;
    },
    async verifiesWithPublishedKeys(jwt) {
      const discovery = (await (await fetch(`${issuer}/.well-known/openid-configuration`)).json()) as { jwks_uri: string };
      const { keys } = (await (await fetch(discovery.jwks_uri)).json()) as { keys: (JsonWebKey & { kid?: string })[] };
      const { header, signingInput, signature } = jwtParts(jwt);
      const published = keys.find((key) => key.kid === header.kid);
      return published !== undefined && verify('sha256', Buffer.from(signingInput), createPublicKey({ key: published, format: 'jwk' }), signature);
    },
    async close() {
      const closed = new Promise<void>((resolve, reject) => httpServer.close((error) => (error ? reject(error) : resolve())));
      httpServer.closeAllConnections();
      await closed;
    },
  };
}
