/**
 * Roles on the dashboard (CONTRACT 9, issue 20 item 1), on both engines, driven by the app's own route
 * table: every signed-in dashboard route is in DASHBOARD_ROUTE_ACTIONS and the table names no route
 * the router lacks. Then a `viewer` and a `developer` of an account its owner has set up (a business
 * server with providers, a redirect URI, end users, a webhook endpoint with a failed message, an
 * account key) send every signed-in route, each POST with its session's CSRF token: where the role
 * may not take the route's action the answer is the 403 page "Your role (…) cannot do this." and no
 * row of any table changes; where it may, the answer is anything but that page (the routes this file
 * knows, the success their request earns). A route added later (team, security, join pages) is sent
 * too, with an empty form, since the role is judged before the body is read. Last, the pages draw
 * only what the role may use: a viewer's pages carry no POST form but "Sign out", no page links to
 * a route its reader's role may not take, and "Rotate key" is an owner's, not a developer's.
 */
import { randomBytes } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DASHBOARD_ROUTE_ACTIONS } from '../../src/dashboard/route-actions.js';
import { newId } from '../../src/primitives/ids.js';
import { CLI_ACTOR } from '../../src/services/context.js';
import { addCustomStaticProvider, parseFieldSpec } from '../../src/services/providers/custom-providers.js';
import { allowRedirectUri } from '../../src/services/servers/servers.js';
import { mayDo, type TeamAction, type TeamRole } from '../../src/services/team/roles.js';
import { newFormNonce } from '../../src/services/users/dashboard-forms.js';
import { hashPassword } from '../../src/services/users/passwords.js';
import { addWebhookEndpoint } from '../../src/services/webhooks/webhook-endpoints.js';
import { WEBHOOK_EVENT_TYPES } from '../../src/services/webhooks/webhook-events.js';
import { csrfOf, DashboardClient, visible } from '../helpers/dashboard-session.js';
import { ENGINES } from '../helpers/databases.js';
import { connectStatic, snapshotTables } from '../helpers/hosted-form.js';
import { appRouteTable } from '../helpers/route-table.js';
import { createTenant, keys, startTestApp, type TestApp } from '../helpers/test-app.js';
import { writeAndDeliver } from '../helpers/webhook-history.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

/**
 * The routes under /dashboard anyone may reach without a session, so outside the table: sign-in,
 * its second step (the one-time code), sign-up and the invitation's join page (the assets are under
 * /assets, not /dashboard). Any other route under /dashboard must be in the table, and every route
 * here must exist.
 */
const PUBLIC_ROUTES = [
  'GET /dashboard/sign-in',
  'POST /dashboard/sign-in',
  'GET /dashboard/sign-up',
  'POST /dashboard/sign-up',
  'GET /dashboard/join/:token',
  'POST /dashboard/join',
  'GET /dashboard/sign-in/code',
  'POST /dashboard/sign-in/code',
  'GET /dashboard/sign-in/recovery',
  'POST /dashboard/sign-in/recovery',
  'GET /dashboard/sso',
  'POST /dashboard/sso',
  'POST /dashboard/sso/join',
  'GET /dashboard/sso/callback',
];

const TABLE = await appRouteTable();
const DASHBOARD_ROUTES = [...new Set(TABLE.filter((r) => r.url === '/dashboard' || r.url.startsWith('/dashboard/')).map((r) => `${r.method} ${r.url}`))];
const TABLE_ROUTES = Object.keys(DASHBOARD_ROUTE_ACTIONS);

/** What the owner set up, and the ids a route's parameters take. */
interface Setup {
  accountId: string;
  serverId: string;
  webhookId: string;
  messageId: string;
  keyId: string;
  ownerId: string;
  redirectUri: string;
  receiverUrl: string;
}

/** One request of the matrix: its path (parameters filled in) and form fields (the CSRF token is added). */
interface RouteRequest {
  path: string;
  fields?: Record<string, string>;
  /** What a role that may act is answered: the request is a real one, so it does what the form does. */
  ok: number;
}

/**
 * The request for each route this file knows, in the order they are sent: the pages first, then the
 * changes, those that take away what a later one needs last (a role allowed to remove the webhook
 * endpoint does so after resending its message), and signing out at the very end.
 */
const REQUESTS: Record<string, (s: Setup) => RouteRequest> = {
  'GET /dashboard': () => ({ path: '/dashboard', ok: 303 }),
  'GET /dashboard/servers': () => ({ path: '/dashboard/servers', ok: 200 }),
  'GET /dashboard/servers/:serverId': (s) => ({ path: `/dashboard/servers/${s.serverId}`, ok: 200 }),
  'GET /dashboard/servers/:serverId/providers': (s) => ({ path: `/dashboard/servers/${s.serverId}/providers`, ok: 200 }),
  'GET /dashboard/servers/:serverId/audience': (s) => ({ path: `/dashboard/servers/${s.serverId}/audience`, ok: 200 }),
  'GET /dashboard/servers/:serverId/audience/revoke': (s) => ({
    path: `/dashboard/servers/${s.serverId}/audience/revoke?externalUserId=alice&provider=openai`,
    ok: 200,
  }),
  'GET /dashboard/servers/:serverId/audience/remove': (s) => ({ path: `/dashboard/servers/${s.serverId}/audience/remove?externalUserId=bob`, ok: 200 }),
  'GET /dashboard/servers/:serverId/webhooks': (s) => ({ path: `/dashboard/servers/${s.serverId}/webhooks`, ok: 200 }),
  'GET /dashboard/servers/:serverId/webhooks/:webhookId': (s) => ({ path: `/dashboard/servers/${s.serverId}/webhooks/${s.webhookId}`, ok: 200 }),
  'GET /dashboard/servers/:serverId/webhooks/:webhookId/rotate-secret': (s) => ({
    path: `/dashboard/servers/${s.serverId}/webhooks/${s.webhookId}/rotate-secret`,
    ok: 200,
  }),
  'GET /dashboard/servers/:serverId/webhooks/:webhookId/remove': (s) => ({ path: `/dashboard/servers/${s.serverId}/webhooks/${s.webhookId}/remove`, ok: 200 }),
  'GET /dashboard/developer': () => ({ path: '/dashboard/developer', ok: 200 }),
  'GET /dashboard/developer/api-keys': () => ({ path: '/dashboard/developer/api-keys', ok: 200 }),
  'GET /dashboard/developer/api-keys/:keyId/revoke': (s) => ({ path: `/dashboard/developer/api-keys/${s.keyId}/revoke`, ok: 200 }),
  'GET /dashboard/audit': () => ({ path: '/dashboard/audit', ok: 200 }),

  'POST /dashboard/servers': () => ({ path: '/dashboard/servers', fields: { once: newFormNonce(), name: 'Staging', mode: 'business' }, ok: 200 }),
  'POST /dashboard/servers/:serverId/mode': (s) => ({ path: `/dashboard/servers/${s.serverId}/mode`, fields: { mode: 'personal' }, ok: 303 }),
  // No box checked: credentials are withheld from the API from now on.
  'POST /dashboard/servers/:serverId/secrets-readable': (s) => ({ path: `/dashboard/servers/${s.serverId}/secrets-readable`, ok: 303 }),
  'POST /dashboard/servers/:serverId/rotate-key': (s) => ({
    path: `/dashboard/servers/${s.serverId}/rotate-key`,
    fields: { once: newFormNonce(), grace: '0' },
    ok: 200,
  }),
  'POST /dashboard/servers/:serverId/redirect-uris': (s) => ({
    path: `/dashboard/servers/${s.serverId}/redirect-uris`,
    fields: { uri: 'https://app.example.test/connected-too' },
    ok: 303,
  }),
  'POST /dashboard/servers/:serverId/redirect-uris/remove': (s) => ({
    path: `/dashboard/servers/${s.serverId}/redirect-uris/remove`,
    fields: { uri: s.redirectUri },
    ok: 303,
  }),
  'POST /dashboard/servers/:serverId/providers': (s) => ({
    path: `/dashboard/servers/${s.serverId}/providers`,
    fields: { provider: 'anthropic', clientId: '', clientSecret: '', scopes: '' },
    ok: 303,
  }),
  'POST /dashboard/servers/:serverId/providers/custom-oauth': (s) => ({
    path: `/dashboard/servers/${s.serverId}/providers/custom-oauth`,
    fields: {
      oauthSlug: 'acme-sso',
      authorizationUrl: 'https://sso.acme.example/authorize',
      tokenUrl: 'https://sso.acme.example/token',
      oauthClientId: 'acme-client-id',
      oauthClientSecret: 'acme-client-secret-5f1e9c',
      tokenAuth: 'client_secret_basic',
    },
    ok: 303,
  }),
  'POST /dashboard/servers/:serverId/providers/custom-static': (s) => ({
    path: `/dashboard/servers/${s.serverId}/providers/custom-static`,
    fields: { staticSlug: 'acme-mail', fields: 'apiKey:API key:secret' },
    ok: 303,
  }),
  'POST /dashboard/servers/:serverId/audience/revoke': (s) => ({
    path: `/dashboard/servers/${s.serverId}/audience/revoke`,
    fields: { externalUserId: 'alice', provider: 'openai' },
    ok: 303,
  }),
  'POST /dashboard/servers/:serverId/audience/remove': (s) => ({
    path: `/dashboard/servers/${s.serverId}/audience/remove`,
    fields: { externalUserId: 'bob' },
    ok: 303,
  }),
  'POST /dashboard/servers/:serverId/webhooks': (s) => ({
    path: `/dashboard/servers/${s.serverId}/webhooks`,
    fields: { once: newFormNonce(), url: s.receiverUrl, events: WEBHOOK_EVENT_TYPES[0] },
    ok: 200,
  }),
  'POST /dashboard/servers/:serverId/webhooks/:webhookId/messages/:messageId/resend': (s) => ({
    path: `/dashboard/servers/${s.serverId}/webhooks/${s.webhookId}/messages/${s.messageId}/resend`,
    ok: 303,
  }),
  'POST /dashboard/servers/:serverId/webhooks/:webhookId/rotate-secret': (s) => ({
    path: `/dashboard/servers/${s.serverId}/webhooks/${s.webhookId}/rotate-secret`,
    fields: { once: newFormNonce(), grace: '0' },
    ok: 200,
  }),
  'POST /dashboard/servers/:serverId/webhooks/:webhookId/remove': (s) => ({
    path: `/dashboard/servers/${s.serverId}/webhooks/${s.webhookId}/remove`,
    ok: 303,
  }),
  'POST /dashboard/developer/api-keys': () => ({
    path: '/dashboard/developer/api-keys',
    fields: { once: newFormNonce(), label: 'Reporting', environment: 'staging', expiresAt: '' },
    ok: 200,
  }),
  'POST /dashboard/developer/api-keys/:keyId/revoke': (s) => ({ path: `/dashboard/developer/api-keys/${s.keyId}/revoke`, ok: 303 }),
};
/** Signing out ends the session the rest of the matrix uses: sent after every other route. */
const SENT_LAST = ['POST /dashboard/sign-out'];

/**
 * A request for a route this file has never seen (a page or form added since): its parameters filled
 * with the setup's ids where their names say which (an unknown one gets an id nothing has), and an
 * empty form with a fresh one-time nonce. Enough for the verdict: the role is judged before the body
 * is read, and a role that may act is answered anything but the role's 403 page.
 */
function requestFor(route: string, setup: Setup): RouteRequest {
  const known = REQUESTS[route];
  if (known) return known(setup);
  const [method, pattern] = route.split(' ') as [string, string];
  const ids: Record<string, string> = {
    serverId: setup.serverId,
    webhookId: setup.webhookId,
    messageId: setup.messageId,
    keyId: setup.keyId,
    userId: setup.ownerId,
  };
  const path = pattern.replace(/:([A-Za-z]+)/g, (_all, name: string) => ids[name] ?? `nothing_${name}`);
  // ok 0: nothing is known of the answer but that it is not the role's 403 page.
  return { path, fields: method === 'POST' ? { once: newFormNonce() } : undefined, ok: 0 };
}

/** The table's routes in the order they are sent: the known requests in theirs, new routes next, signing out last. */
const SENT_ROUTES = [
  ...Object.keys(REQUESTS).filter((route) => TABLE_ROUTES.includes(route)),
  ...TABLE_ROUTES.filter((route) => !Object.hasOwn(REQUESTS, route) && !SENT_LAST.includes(route)),
  ...SENT_LAST,
];

/** The route a path (of a link or a form on a page) reaches: its pattern with the most fixed segments wins, as in the router. */
function routeOfPath(method: string, path: string): string | undefined {
  const segments = path.split('?')[0]!.split('/');
  const matches = TABLE_ROUTES.filter((route) => {
    const [m, pattern] = route.split(' ') as [string, string];
    const parts = pattern.split('/');
    return m === method && parts.length === segments.length && parts.every((part, i) => part.startsWith(':') || part === segments[i]);
  });
  const fixed = (route: string) => route.split('/').filter((part) => !part.startsWith(':')).length;
  return matches.sort((a, b) => fixed(b) - fixed(a))[0];
}

/** Every place a page leads: the actions of its forms (by method) and its links, under /dashboard, unescaped. */
function destinationsOf(body: string): { method: string; path: string }[] {
  const unescaped = (text: string) => text.replace(/&amp;/g, '&');
  const forms = [...body.matchAll(/<form method="(get|post)"[^>]*action="([^"]+)"/g)].map(([, method, path]) => ({
    method: method!.toUpperCase(),
    path: unescaped(path!),
  }));
  const links = [...body.matchAll(/<a href="([^"]+)"/g)].map(([, path]) => ({ method: 'GET', path: unescaped(path!) }));
  return [...forms, ...links].filter((d) => d.path.startsWith('/dashboard/'));
}

const refusedText = (role: TeamRole) => `Your role (${role}) cannot do this.`;
const isRefusal = (response: LightMyRequestResponse, role: TeamRole) => response.statusCode === 403 && visible(response.body).includes(refusedText(role));

describe('the dashboard route table', () => {
  it('names every signed-in dashboard route the router has, and no other; only the public pages are outside it', () => {
    const outside = DASHBOARD_ROUTES.filter((route) => !Object.hasOwn(DASHBOARD_ROUTE_ACTIONS, route));
    expect(outside.sort(), 'a route under /dashboard with no action, not a public page').toEqual([...PUBLIC_ROUTES].sort());
    expect(
      TABLE_ROUTES.filter((route) => !DASHBOARD_ROUTES.includes(route)),
      'a table entry naming no route',
    ).toEqual([]);
    // The matrix below sends every signed-in route: each GET and POST of the table.
    expect([...SENT_ROUTES].sort()).toEqual([...TABLE_ROUTES].sort());
    expect(TABLE_ROUTES.filter((route) => route.startsWith('POST ')).length).toBeGreaterThanOrEqual(20);
  });

  it('finds the route a path reaches, a fixed segment before a parameter', () => {
    expect(routeOfPath('GET', '/dashboard/servers/srv_1/audience/revoke?externalUserId=a')).toBe('GET /dashboard/servers/:serverId/audience/revoke');
    expect(routeOfPath('POST', '/dashboard/servers/srv_1/webhooks/wh_1/remove')).toBe('POST /dashboard/servers/:serverId/webhooks/:webhookId/remove');
    expect(routeOfPath('GET', '/dashboard/servers/srv_1')).toBe('GET /dashboard/servers/:serverId');
    expect(routeOfPath('GET', '/dashboard/nowhere/at/all')).toBeUndefined();
  });
});

describe.each(ENGINES)('roles on the dashboard on %s', (engine) => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    t = await startTestApp(engine);
    // Every delivery fails at once, so the setup's message can be resent.
    receiver = await startWebhookReceiver({ status: 400 });
  });
  afterAll(async () => {
    await receiver?.close();
    await t?.close();
  });

  /** A user of the account with `role`, made as the repository stores one, then signed in through the sign-in form. */
  async function signedInUser(accountId: string, role: TeamRole) {
    const email = `${role}-${randomBytes(4).toString('hex')}@team.example`;
    const password = 'correct horse battery staple';
    const userId = newId('usr');
    await t.ctx.store.accounts.addUser({
      id: userId,
      account_id: accountId,
      email,
      password_hash: await hashPassword(password),
      created_at: t.clock.now().toISOString(),
      role,
      last_sign_in_at: null,
    });
    const session = { userId, client: new DashboardClient(t.app), csrf: '' };
    /** Signs in again (a route of the matrix may end the session): a new session, so a new CSRF token. */
    const signIn = async () => {
      session.client = new DashboardClient(t.app);
      const answer = await session.client.submit('/dashboard/sign-in', '/dashboard/sign-in', { email, password });
      expect(answer.statusCode, answer.body.slice(0, 300)).toBe(303);
      const page = await session.client.get('/dashboard/servers');
      expect(page.statusCode).toBe(200);
      session.csrf = csrfOf(page.body);
    };
    await signIn();
    return { session, signIn };
  }

  /**
   * An account as its owner set it up: a business server with OpenAI and a custom provider enabled
   * and a redirect URI, an end user with a credential and one without, a webhook endpoint with a
   * failed message, and an account key.
   */
  async function ownersAccount(): Promise<Setup> {
    const tenant = await createTenant(t.ctx, { providers: ['openai'] });
    const { serverId } = tenant;
    await addCustomStaticProvider(t.ctx, { serverId, slug: 'acme-crm', fields: [parseFieldSpec('apiKey:API key:secret')], actor: CLI_ACTOR });
    const redirectUri = 'https://app.example.test/connected';
    await allowRedirectUri(t.ctx, serverId, redirectUri, CLI_ACTOR);
    const headers = keys(tenant);
    await connectStatic(t.app, headers, { externalUserId: 'alice', values: { apiKey: 'sk-proj-rolesMatrixValue0123456789' } });
    await connectStatic(t.app, headers, { externalUserId: 'bob', values: { apiKey: 'sk-proj-rolesMatrixValue9876543210' } });
    const erased = await t.app.inject({ method: 'DELETE', url: '/v1/end-users/bob?provider=openai', headers });
    expect(erased.statusCode).toBe(200);
    const { webhookId } = await addWebhookEndpoint(t.ctx, { serverId, url: receiver.url, actor: CLI_ACTOR });
    const [messageId] = await writeAndDeliver(t, serverId);
    return {
      accountId: tenant.accountId,
      serverId,
      webhookId,
      messageId: messageId!,
      keyId: tenant.accountKeyId,
      ownerId: tenant.userId,
      redirectUri,
      receiverUrl: receiver.url,
    };
  }

  describe.each(['viewer', 'developer'] as const)('a %s', (role) => {
    let setup: Setup;
    let user: Awaited<ReturnType<typeof signedInUser>>;
    beforeAll(async () => {
      setup = await ownersAccount();
      user = await signedInUser(setup.accountId, role);
    });

    for (const route of SENT_ROUTES) {
      const action: TeamAction = DASHBOARD_ROUTE_ACTIONS[route]!;
      const allowed = mayDo(role, action);
      it(`${allowed ? 'may' : 'may not'} ${route} (${action})`, async () => {
        const request = requestFor(route, setup);
        const send = () =>
          route.startsWith('POST ')
            ? user.session.client.post(request.path, { csrf: user.session.csrf, ...request.fields })
            : user.session.client.get(request.path);
        if (!allowed) {
          const before = await snapshotTables(t.ctx);
          const response = await send();
          expect(response.statusCode, response.body.slice(0, 300)).toBe(403);
          expect(visible(response.body)).toContain(refusedText(role));
          expect(await snapshotTables(t.ctx), 'a refused request changed a row').toEqual(before);
          return;
        }
        const response = await send();
        expect(isRefusal(response, role), `${route} refused a ${role}`).toBe(false);
        if (request.ok) expect(response.statusCode, response.body.slice(0, 500)).toBe(request.ok);
        // A route this file does not know may end the session (signing out, ending one's sessions): begin a new one.
        if ((await user.session.client.get('/dashboard/servers')).statusCode !== 200) await user.signIn();
      });
    }
  });

  describe('pages', () => {
    let setup: Setup;
    const signedIn: Partial<Record<TeamRole, Awaited<ReturnType<typeof signedInUser>>>> = {};
    beforeAll(async () => {
      setup = await ownersAccount();
      for (const role of ['viewer', 'developer', 'owner'] as const) signedIn[role] = await signedInUser(setup.accountId, role);
    });
    const viewPages = () => TABLE_ROUTES.filter((route) => route.startsWith('GET ') && DASHBOARD_ROUTE_ACTIONS[route] === 'view');

    it('show a viewer no POST form but “Sign out”, on every page a viewer may see', async () => {
      const { client } = signedIn.viewer!.session;
      for (const route of viewPages()) {
        const request = requestFor(route, setup);
        const response = await client.get(request.path);
        expect(isRefusal(response, 'viewer'), route).toBe(false);
        // The pages this file knows were really drawn, with what the owner set up in them.
        if (request.ok) expect(response.statusCode, route).toBe(request.ok);
        const posts = [...response.body.matchAll(/<form method="post"[^>]*>/g)].map(([form]) => form);
        expect(
          posts.filter((form) => form !== '<form method="post" action="/dashboard/sign-out">'),
          route,
        ).toEqual([]);
      }
    });

    it('lead a viewer and a developer only to what their role may do', async () => {
      for (const role of ['viewer', 'developer'] as const) {
        const { client } = signedIn[role]!.session;
        const refusedLinks: string[] = [];
        for (const route of viewPages()) {
          const response = await client.get(requestFor(route, setup).path);
          for (const destination of destinationsOf(response.body)) {
            const reached = routeOfPath(destination.method, destination.path);
            if (reached && !mayDo(role, DASHBOARD_ROUTE_ACTIONS[reached]!)) refusedLinks.push(`${route} → ${destination.method} ${destination.path}`);
          }
        }
        expect(refusedLinks, `${role}'s pages lead to what the role may not do`).toEqual([]);
      }
    });

    it('show "Rotate key" to an owner, not to a developer; redirect URIs to both; the server settings to the owner only', async () => {
      const overview = `/dashboard/servers/${setup.serverId}`;
      const owner = await signedIn.owner!.session.client.get(overview);
      const developer = await signedIn.developer!.session.client.get(overview);
      const viewer = await signedIn.viewer!.session.client.get(overview);
      expect([owner.statusCode, developer.statusCode, viewer.statusCode]).toEqual([200, 200, 200]);

      expect(owner.body).toContain('<button type="submit" class="secondary">Rotate key</button>');
      expect(owner.body).toContain('Change mode</button>');
      expect(owner.body).toContain(`action="/dashboard/servers/${setup.serverId}/secrets-readable"`);
      expect(developer.body).not.toContain('Rotate key');
      expect(developer.body).not.toContain('Change mode');
      expect(developer.body).not.toContain('/secrets-readable');
      expect(visible(developer.body)).toContain('Your role (developer) can see the key’s hint but not rotate the key.');
      for (const page of [owner, developer]) {
        expect(page.body).toContain('<button type="submit">Add redirect URI</button>');
        expect(page.body).toContain(`action="/dashboard/servers/${setup.serverId}/redirect-uris/remove"`);
      }
      // A viewer still sees everything the page tells: the mode, the key's hint, the redirect URIs.
      expect(viewer.body).not.toContain('Add redirect URI');
      expect(visible(viewer.body, ' ')).toContain('https://app.example.test/connected');
      expect(visible(viewer.body, ' ')).toContain('Mode Business');
      expect(visible(viewer.body)).toContain('Your role (viewer) can see the key’s hint but not rotate the key.');

      const servers = await signedIn.developer!.session.client.get('/dashboard/servers');
      expect(servers.body).not.toContain('Create server');
      expect((await signedIn.owner!.session.client.get('/dashboard/servers')).body).toContain('<button type="submit">Create server</button>');
    });

    it('leave out what a viewer cannot use on the keys, providers, audience and webhook pages, and say why', async () => {
      const { client } = signedIn.viewer!.session;
      const keysPage = await client.get('/dashboard/developer/api-keys');
      expect(keysPage.body).not.toContain('Generate a new key');
      expect(keysPage.body).not.toContain('>Revoke</button>');
      expect(visible(keysPage.body)).toContain('Your role (viewer) can see these keys but not change them.');
      expect(visible(keysPage.body, ' ')).toContain('backend');

      const providers = await client.get(`/dashboard/servers/${setup.serverId}/providers`);
      expect(providers.body).not.toContain('Enable a provider');
      expect(providers.body).not.toContain('Add a custom');
      expect(visible(providers.body, ' ')).toContain('acme-crm');

      const audience = await client.get(`/dashboard/servers/${setup.serverId}/audience`);
      expect(visible(audience.body, ' ')).toMatch(/alice .* OpenAI/);
      expect(audience.body).not.toContain('>Revoke</button>');
      expect(audience.body).not.toContain('>Remove</button>');
      expect(visible(audience.body, ' ')).not.toContain('Actions');

      const endpoint = await client.get(`/dashboard/servers/${setup.serverId}/webhooks/${setup.webhookId}`);
      expect(visible(endpoint.body, ' ')).toContain('Failed');
      expect(endpoint.body).not.toContain('Resend');
      expect(endpoint.body).not.toContain('Rotate secret');
      const webhooks = await client.get(`/dashboard/servers/${setup.serverId}/webhooks`);
      expect(webhooks.body).not.toContain('Add an endpoint');

      // The developer may do all of these: the same pages draw their forms.
      const developer = signedIn.developer!.session.client;
      expect((await developer.get('/dashboard/developer/api-keys')).body).toContain('<button type="submit">Generate Key</button>');
      expect((await developer.get(`/dashboard/servers/${setup.serverId}/providers`)).body).toContain('<button type="submit">Enable provider</button>');
      expect((await developer.get(`/dashboard/servers/${setup.serverId}/audience`)).body).toContain('>Revoke</button>');
      const developerEndpoint = await developer.get(`/dashboard/servers/${setup.serverId}/webhooks/${setup.webhookId}`);
      expect(developerEndpoint.body).toContain('>Resend</button>');
      expect(developerEndpoint.body).toContain('>Rotate secret</button>');
    });
  });
});
