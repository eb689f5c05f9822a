/**
 * A real OpenID Connect provider (oidc-provider 9, in memory, on 127.0.0.1) for the single sign-on
 * suites that drive a browser through it (CONTRACT 9): one confidential client (client_secret_basic,
 * PKCE required) whose redirect URI is Keyward's SSO callback, the `openid email` scopes, and ID
 * tokens that carry `email` and `email_verified: true`. Its sign-in is a small HTML page (an "Email"
 * field, prefilled from `login_hint`, and a "Sign in" button) that a browser fills in; consent is given
 * at once. The same email is the same subject every time.
 */
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Ctx, grantConsent, loadOidcProvider, memoryAdapter } from './authorization-server.js';

export interface SsoIdentityProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The subject the provider gives an email. */
  subjectOf(email: string): string;
  close(): Promise<void>;
}

async function formOf(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
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
    async close() {
      const closed = new Promise<void>((resolve, reject) => httpServer.close((error) => (error ? reject(error) : resolve())));
      httpServer.closeAllConnections();
      await closed;
    },
  };
}
