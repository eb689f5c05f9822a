/**
 * A server's branding (CONTRACT 10, issue 21 item 6) on both engines: logos judged by their bytes (a
 * PNG and an SVG taken; every bad file of the list refused with its own message, the stored
 * logo left as it was), the served logo's headers, the accent's stylesheet, the dashboard's Overview →
 * Branding (an admin changes it with a real multipart upload; a viewer and a developer see it and
 * cannot), the audit trail, and the hosted form and OAuth pages wearing it. The CLI: test/cli/brand-cli;
 * a real browser: test/pages/branding.page.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/primitives/ids.js';
import { readBranding } from '../../src/services/branding/branding.js';
import { changeBranding } from '../../src/services/branding/branding-changes.js';
import { CLI_ACTOR } from '../../src/services/context.js';
import { DomainError } from '../../src/services/domain-error.js';
import { createServer } from '../../src/services/servers/servers.js';
import type { TeamRole } from '../../src/services/team/roles.js';
import { hashPassword } from '../../src/services/users/passwords.js';
import { auditEventsOf, csrfOf, DashboardClient, newSignedInUser, visible } from '../helpers/dashboard-session.js';
import { ENGINES } from '../helpers/databases.js';
import { openHostedForm, postHostedForm, snapshotTables } from '../helpers/hosted-form.js';
import { BAD_LOGOS, multipartBody, pngLogo, SVG_LOGO } from '../helpers/logo-files.js';
import { APP_REDIRECT, type OAuthTenant, startOAuthTenant } from '../helpers/oauth-tenant.js';
import { createTenant, keys, startTestApp, type TestApp } from '../helpers/test-app.js';

const LOGO_URL = /^\/branding\/srv_[0-9a-z]+\/logo-[0-9a-f]{16}$/;

describe.each(ENGINES)('server branding on %s', (engine) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(engine);
  });
  afterAll(() => t.close());

  const brandingRow = (serverId: string) => t.ctx.store.db.selectFrom('server_branding').selectAll().where('server_id', '=', serverId).executeTakeFirst();
  const fetchLogo = (url: string) => t.app.inject({ method: 'GET', url });

  describe('logos, judged by their bytes', () => {
    it('takes a PNG and an SVG, and serves each with its type, nosniff, a CSP under which nothing runs, inline, cached for good', async () => {
      const { serverId, accountId } = await createTenant(t.ctx);
      const png = pngLogo();
      const withPng = await changeBranding(t.ctx, serverId, { logo: png }, CLI_ACTOR);
      expect(withPng.logoUrl).toMatch(LOGO_URL);
      const served = await fetchLogo(withPng.logoUrl!);
      expect(served.statusCode).toBe(200);
      expect(served.headers['content-type']).toBe('image/png');
      expect(served.headers['x-content-type-options']).toBe('nosniff');
      expect(served.headers['content-security-policy']).toBe("default-src 'none'; style-src 'unsafe-inline'; sandbox");
      expect(served.headers['content-disposition']).toBe('inline; filename="logo.png"');
      expect(served.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(served.rawPayload.equals(png)).toBe(true);
      const row = await brandingRow(serverId);
      expect(Buffer.from(row!.logo!).equals(png)).toBe(true);
      expect(row).toMatchObject({ logo_type: 'image/png', logo_version: withPng.logoUrl!.slice(-16), display_name: null, accent_color: null });

      // The same file again is no change: the same URL, no second audit event.
      expect((await changeBranding(t.ctx, serverId, { logo: png }, CLI_ACTOR)).logoUrl).toBe(withPng.logoUrl);

      const withSvg = await changeBranding(t.ctx, serverId, { logo: Buffer.from(SVG_LOGO) }, CLI_ACTOR);
      expect(withSvg.logoUrl).toMatch(LOGO_URL);
      expect(withSvg.logoUrl).not.toBe(withPng.logoUrl);
      const svg = await fetchLogo(withSvg.logoUrl!);
      expect(svg.statusCode).toBe(200);
      expect(svg.headers['content-type']).toBe('image/svg+xml');
      expect(svg.headers['content-security-policy']).toBe("default-src 'none'; style-src 'unsafe-inline'; sandbox");
      expect(svg.headers['x-content-type-options']).toBe('nosniff');
      expect(svg.headers['content-disposition']).toBe('inline; filename="logo.svg"');
      expect(svg.body).toBe(SVG_LOGO);

      // The replaced logo's URL, another server's id, a malformed version: 404, nothing served.
      for (const url of [
        withPng.logoUrl!,
        withSvg.logoUrl!.replace(serverId, 'srv_nothing'),
        `/branding/${serverId}/logo-abc`,
        `/branding/${serverId}/logo-`,
      ]) {
        const missing = await fetchLogo(url);
        expect(missing.statusCode, url).toBe(404);
        expect(missing.headers['content-type'], url).toMatch(/^application\/problem\+json/);
      }
      const head = await t.app.inject({ method: 'HEAD', url: withSvg.logoUrl! });
      expect(head.statusCode).toBe(200);

      const events = await auditEventsOf(t.ctx.store.db, accountId, 'server.branding_changed');
      expect(events.map((e) => JSON.parse(e.detail).logo)).toEqual([
        { change: 'uploaded', type: 'image/png', bytes: png.length, version: withPng.logoUrl!.slice(-16) },
        { change: 'uploaded', type: 'image/svg+xml', bytes: Buffer.byteLength(SVG_LOGO), version: withSvg.logoUrl!.slice(-16) },
      ]);
      expect(events.every((e) => e.actor === 'cli' && e.target_id === serverId)).toBe(true);
    });

    it('refuses every bad logo with one message on the field `logo`, and leaves the stored logo and the trail as they were', async () => {
      const { serverId } = await createTenant(t.ctx);
      await changeBranding(t.ctx, serverId, { displayName: 'Acme', logo: pngLogo() }, CLI_ACTOR);
      const before = await snapshotTables(t.ctx);
      const refusals: string[] = [];
      for (const bad of BAD_LOGOS) {
        const refused = await changeBranding(t.ctx, serverId, { displayName: 'Changed too', logo: bad.bytes }, CLI_ACTOR).then(
          () => null,
          (error: unknown) => error,
        );
        expect(refused, bad.name).toBeInstanceOf(DomainError);
        const { code, field, detail } = refused as DomainError;
        expect({ code, field }, bad.name).toEqual({ code: 'validation_failed', field: 'logo' });
        expect(detail, bad.name).toMatch(bad.message);
        refusals.push(detail);
      }
      // One clear sentence each: no line breaks, nothing echoed at length.
      expect(refusals.every((r) => !r.includes('\n') && r.length < 200)).toBe(true);
      expect(await snapshotTables(t.ctx)).toEqual(before);
    });

    it('checks the display name and the accent colour before writing anything, and clears them when empty', async () => {
      const { serverId } = await createTenant(t.ctx);
      await changeBranding(t.ctx, serverId, { displayName: '  Acme Payroll  ', accentColor: '#0F766E' }, CLI_ACTOR);
      expect(await readBranding(t.ctx, serverId)).toEqual({ displayName: 'Acme Payroll', accentColor: '#0f766e', logoUrl: null });
      const before = await snapshotTables(t.ctx);
      const cases: [Parameters<typeof changeBranding>[2], string, RegExp][] = [
        [{ accentColor: 'teal' }, 'accentColor', /^the accent colour must be #rrggbb/],
        [{ accentColor: '#abc' }, 'accentColor', /^the accent colour must be #rrggbb/],
        [{ accentColor: '#0f766e; background: url(x)' }, 'accentColor', /^the accent colour must be #rrggbb/],
        [{ displayName: 'x'.repeat(101) }, 'displayName', /at most 100 characters/],
        [{ displayName: 'Acme\u0007' }, 'displayName', /control characters/],
        [{ displayName: 'Acme \ud800' }, 'displayName', /lone UTF-16 surrogate/],
        [{ displayName: 'Fine', logo: Buffer.from('nope') }, 'logo', /not a PNG or SVG/],
      ];
      for (const [input, field, message] of cases) {
        const error = (await changeBranding(t.ctx, serverId, input, CLI_ACTOR).catch((e: unknown) => e)) as DomainError;
        expect(error, JSON.stringify(input)).toBeInstanceOf(DomainError);
        expect(error.field).toBe(field);
        expect(error.detail).toMatch(message);
      }
      expect(await snapshotTables(t.ctx)).toEqual(before);
      await changeBranding(t.ctx, serverId, { displayName: '', accentColor: '' }, CLI_ACTOR);
      expect(await readBranding(t.ctx, serverId)).toEqual({ displayName: null, accentColor: null, logoUrl: null });
      const unknown = (await changeBranding(t.ctx, 'srv_nothing', { displayName: 'x' }, CLI_ACTOR).catch((e: unknown) => e)) as DomainError;
      expect(unknown.code).toBe('server_not_found');
    });

    it("serves an accent's stylesheet: the pages' own with the colour, text on it that reads, and links dark enough on white", async () => {
      const teal = await t.app.inject({ method: 'GET', url: '/branding/style-0f766e.css' });
      expect(teal.statusCode).toBe(200);
      expect(teal.headers['content-type']).toBe('text/css; charset=utf-8');
      expect(teal.headers['x-content-type-options']).toBe('nosniff');
      expect(teal.body).toContain('.card {');
      expect(teal.body).toContain(':root { --accent: #0f766e; --accent-ink: #ffffff; --accent-text: #0f766e; }');
      // A light yellow: dark text on its buttons, and its links darkened to 4.5:1 on white.
      const yellow = await t.app.inject({ method: 'GET', url: '/branding/style-ffe14d.css' });
      const [, accentText] = /--accent-text: (#[0-9a-f]{6})/.exec(yellow.body)!;
      expect(yellow.body).toContain('--accent-ink: #1c2430');
      expect(accentText).not.toBe('#ffe14d');
      for (const url of ['/branding/style-FFE14D.css', '/branding/style-ffe14.css', '/branding/style-zzzzzz.css', '/branding/other.css']) {
        expect((await t.app.inject({ method: 'GET', url })).statusCode, url).toBe(404);
      }
    });
  });

  describe('the dashboard: Overview → Branding', () => {
    /** A user of the account with `role`, signed in through the sign-in form. */
    async function teammate(accountId: string, role: TeamRole) {
      const email = `${role}-${randomBytes(4).toString('hex')}@team.example`;
      const password = 'correct horse battery staple';
      await t.ctx.store.accounts.addUser({
        id: newId('usr'),
        account_id: accountId,
        email,
        password_hash: await hashPassword(password),
        created_at: t.clock.now().toISOString(),
        role,
        last_sign_in_at: null,
      });
      const client = new DashboardClient(t.app);
      const signedIn = await client.submit('/dashboard/sign-in', '/dashboard/sign-in', { email, password });
      expect(signedIn.statusCode).toBe(303);
      return client;
    }

    /** An owner's new account with a server made through the service. */
    async function ownersServer() {
      const { client, accountId } = await newSignedInUser(t.app, t.ctx.store.db, 'Branding');
      const { serverId } = await createServer(t.ctx, { accountId, name: 'Production', mode: 'business', actor: CLI_ACTOR });
      return { client, accountId, serverId, page: `/dashboard/servers/${serverId}/branding` };
    }

    /** Sends the Branding form as a browser does: multipart, the page's CSRF token first, the file last. */
    async function upload(client: DashboardClient, page: string, fields: Record<string, string>, file?: { filename: string; type: string; bytes: Buffer }) {
      const csrf = csrfOf((await client.get(page)).body);
      const { payload, contentType } = multipartBody({ csrf, ...fields }, file);
      return t.app.inject({ method: 'POST', url: page, headers: { cookie: client.cookieHeader, 'content-type': contentType }, payload });
    }

    it('lets an owner set the display name, the accent colour and an SVG logo, shows them on Overview and audits the change', async () => {
      const { client, accountId, serverId, page } = await ownersServer();
      const overview = await client.get(`/dashboard/servers/${serverId}`);
      expect(overview.statusCode).toBe(200);
      expect(overview.body).toContain('<h2 id="server-branding">Branding</h2>');
      expect(overview.body).toContain(`<a href="${page}">Branding</a>`);

      const form = await client.get(page);
      expect(form.statusCode).toBe(200);
      expect(form.body).toContain(`<form method="post" action="${page}" enctype="multipart/form-data" novalidate>`);
      expect(form.body).toContain('<label for="field-displayName">Display name');
      expect(form.body).toContain('<label for="field-accentColor">Accent colour');
      expect(form.body).toContain('<input id="field-logo" name="logo" type="file" accept="image/png,image/svg+xml"');
      expect(form.body).not.toContain('Remove logo');

      const saved = await upload(
        client,
        page,
        { displayName: 'Acme Payroll', accentColor: '#0F766E' },
        { filename: 'logo.svg', type: 'image/svg+xml', bytes: Buffer.from(SVG_LOGO) },
      );
      expect(saved.statusCode, saved.body.slice(0, 400)).toBe(303);
      expect(saved.headers.location).toBe(`${page}?notice=saved`);
      const branding = await readBranding(t.ctx, serverId);
      expect(branding).toMatchObject({ displayName: 'Acme Payroll', accentColor: '#0f766e' });
      expect(branding.logoUrl).toMatch(LOGO_URL);

      const after = await client.get(`${page}?notice=saved`);
      expect(visible(after.body)).toContain('The branding was saved.');
      expect(after.body).toContain(`<img class="logo-preview" src="${branding.logoUrl}" alt="The current logo">`);
      expect(after.body).toContain('value="Acme Payroll"');
      expect(after.body).toContain('Remove logo</button>');
      expect((await client.get(`/dashboard/servers/${serverId}`)).body).toContain('<code>#0f766e</code>');

      // Without a file chosen the logo stays; the name changes.
      const renamed = await upload(
        client,
        page,
        { displayName: 'Acme', accentColor: '#0f766e' },
        { filename: '', type: 'application/octet-stream', bytes: Buffer.alloc(0) },
      );
      expect(renamed.statusCode).toBe(303);
      expect(await readBranding(t.ctx, serverId)).toEqual({ ...branding, displayName: 'Acme' });

      const removed = await client.submit(page, `${page}/remove-logo`, {});
      expect(removed.statusCode).toBe(303);
      expect(removed.headers.location).toBe(`${page}?notice=logo-removed`);
      expect((await readBranding(t.ctx, serverId)).logoUrl).toBeNull();
      // Removed, not only hidden: the bytes are gone from storage.
      expect(await brandingRow(serverId)).toMatchObject({ logo: null, logo_type: null, logo_version: null, display_name: 'Acme' });
      expect((await fetchLogo(branding.logoUrl!)).statusCode).toBe(404);

      const audit = visible((await client.get('/dashboard/audit')).body);
      expect(audit).toContain('Changed the branding of Production: display name set to “Acme Payroll”, accent colour set to #0f766e, new logo (SVG,');
      expect(audit).toContain('Changed the branding of Production: display name set to “Acme”');
      expect(audit).toContain('Changed the branding of Production: logo removed');
      expect((await auditEventsOf(t.ctx.store.db, accountId, 'server.branding_changed')).every((e) => e.actor.startsWith('user:usr_'))).toBe(true);
    });

    it('answers each bad upload with the form again (422), the message beside its field, and nothing stored changed', async () => {
      const { client, serverId, page } = await ownersServer();
      await changeBranding(t.ctx, serverId, { displayName: 'Kept', logo: pngLogo() }, CLI_ACTOR);
      const before = await snapshotTables(t.ctx);
      const uploads = [
        { file: { filename: 'notes.png', type: 'image/png', bytes: BAD_LOGOS[0]!.bytes }, field: 'logo', message: 'The logo is not a PNG or SVG image.' },
        { file: { filename: 'logo.svg', type: 'image/svg+xml', bytes: BAD_LOGOS[3]!.bytes }, field: 'logo', message: 'a <script> element' },
        { file: { filename: 'big.png', type: 'image/png', bytes: BAD_LOGOS[2]!.bytes }, field: 'logo', message: '65,537 bytes' },
        // Far past what the form keeps: read through, and said to be too large.
        {
          file: { filename: 'huge.png', type: 'image/png', bytes: randomBytes(300 * 1024) },
          field: 'logo',
          message: 'The logo is over 64 KiB; it may be at most 64 KiB (65,536 bytes).',
        },
      ];
      for (const { file, field, message } of uploads) {
        const response = await upload(client, page, { displayName: 'Typed', accentColor: '#123456' }, file);
        expect(response.statusCode, file.filename).toBe(422);
        expect(response.body, file.filename).toContain(`id="field-${field}" name="${field}" type="file"`);
        expect(response.body).toMatch(
          new RegExp(
            `<p class="error" id="field-${field}-error">[^<]*${message
              .replace(/[.*+?^$()|[\]\\{}]/g, '\\$&')
              .replace(/</g, '&lt;')
              .replace(/>/g, '&gt;')}`,
          ),
        );
        // What was typed is kept for the next try.
        expect(response.body).toContain('value="Typed"');
      }
      const colour = await upload(client, page, { displayName: 'Typed', accentColor: 'red' });
      expect(colour.statusCode).toBe(422);
      expect(colour.body).toContain('<p class="error" id="field-accentColor-error">The accent colour must be #rrggbb');
      expect(await snapshotTables(t.ctx)).toEqual(before);

      // A part no form of ours sends, a file in a text field, a request past the reader's bound: refused whole.
      const csrf = csrfOf((await client.get(page)).body);
      const extra = multipartBody({ csrf, displayName: 'x', admin: 'true' });
      const fileAsName = multipartBody({ csrf }, { name: 'displayName', filename: 'a.txt', type: 'text/plain', bytes: Buffer.from('x') });
      for (const body of [extra, fileAsName]) {
        const refused = await t.app.inject({
          method: 'POST',
          url: page,
          headers: { cookie: client.cookieHeader, 'content-type': body.contentType },
          payload: body.payload,
        });
        expect(refused.statusCode).toBe(400);
        expect(visible(refused.body)).toContain('Request not accepted');
      }
      const tooLarge = multipartBody({ csrf }, { filename: 'x.png', type: 'image/png', bytes: randomBytes(2 * 1024 * 1024) });
      const refused = await t.app.inject({
        method: 'POST',
        url: page,
        headers: { cookie: client.cookieHeader, 'content-type': tooLarge.contentType },
        payload: tooLarge.payload,
      });
      expect(refused.statusCode).toBe(413);
      // Without the session's CSRF token nothing is read further.
      const forged = multipartBody({ csrf: 'forged', displayName: 'Forged' });
      const noCsrf = await t.app.inject({
        method: 'POST',
        url: page,
        headers: { cookie: client.cookieHeader, 'content-type': forged.contentType },
        payload: forged.payload,
      });
      expect(noCsrf.statusCode).toBe(403);
      expect(await snapshotTables(t.ctx)).toEqual(before);
    });

    it('shows a viewer and a developer the branding without the form; their posts are the 403 page and change nothing; an admin may', async () => {
      const { accountId, serverId, page } = await ownersServer();
      await changeBranding(t.ctx, serverId, { displayName: 'Acme', logo: pngLogo() }, CLI_ACTOR);
      for (const role of ['viewer', 'developer'] as const) {
        const client = await teammate(accountId, role);
        const shown = await client.get(page);
        expect(shown.statusCode).toBe(200);
        expect(visible(shown.body)).toContain(`Your role (${role}) can see the branding but not change it.`);
        expect(shown.body).not.toContain('<form method="post" action="/dashboard/servers/');
        expect(shown.body).not.toContain('Remove logo');
        const before = await snapshotTables(t.ctx);
        const csrf = csrfOf(shown.body);
        const { payload, contentType } = multipartBody({ csrf, displayName: 'Not yours' }, { filename: 'l.png', type: 'image/png', bytes: pngLogo(2, 2) });
        const posted = await t.app.inject({ method: 'POST', url: page, headers: { cookie: client.cookieHeader, 'content-type': contentType }, payload });
        expect(posted.statusCode).toBe(403);
        expect(visible(posted.body)).toContain(`Your role (${role}) cannot do this.`);
        const remove = await client.post(`${page}/remove-logo`, { csrf });
        expect(remove.statusCode).toBe(403);
        expect(await snapshotTables(t.ctx)).toEqual(before);
      }
      const admin = await teammate(accountId, 'admin');
      const saved = await upload(admin, page, { displayName: 'Acme by admin', accentColor: '' });
      expect(saved.statusCode).toBe(303);
      expect((await readBranding(t.ctx, serverId)).displayName).toBe('Acme by admin');
      // Another account's user finds no such page.
      const stranger = await newSignedInUser(t.app, t.ctx.store.db, 'Stranger');
      expect((await stranger.client.get(page)).statusCode).toBe(404);
    });
  });

  describe('the hosted form wears the branding', () => {
    it("shows the server's name, logo and accent on the form and its success page; unbranded servers and anonymous pages keep Keyward's look", async () => {
      const tenant = await createTenant(t.ctx);
      const headers = keys(tenant);
      const newForm = async () => {
        const created = await t.app.inject({ method: 'POST', url: '/v1/credentials/static/openai/connect', headers, payload: { externalUserId: 'u_brand' } });
        return created.json().url as string;
      };
      const plain = await openHostedForm(t.app, await newForm());
      expect(plain.html).toContain('<link rel="stylesheet" href="/assets/keyward.css">');
      expect(plain.html).not.toContain('class="brand"');

      const branding = await changeBranding(t.ctx, tenant.serverId, { displayName: 'Acme <Payroll>', accentColor: '#0f766e', logo: pngLogo() }, CLI_ACTOR);
      const visit = await openHostedForm(t.app, await newForm());
      expect(visit.status).toBe(200);
      expect(visit.html).toContain('<link rel="stylesheet" href="/branding/style-0f766e.css">');
      expect(visit.html).toContain(`<img class="brand-logo" src="${branding.logoUrl}" alt="">`);
      expect(visit.html).toContain('<span class="brand-name">Acme &lt;Payroll&gt;</span>');
      const invalid = await postHostedForm(t.app, visit, { apiKey: '' });
      expect(invalid.statusCode).toBe(422);
      expect(invalid.body).toContain('<span class="brand-name">Acme &lt;Payroll&gt;</span>');
      const done = await postHostedForm(t.app, visit, { apiKey: 'sk-proj-Good0123456789abcdefghij' });
      expect(done.statusCode).toBe(200);
      expect(done.body).toContain('<span class="brand-name">Acme &lt;Payroll&gt;</span>');
      expect(done.body).toContain('href="/branding/style-0f766e.css"');
      // The used link's page says nothing of whose it was: no branding.
      const used = await t.app.inject({ method: 'GET', url: visit.path });
      expect(used.statusCode).toBe(410);
      expect(used.body).not.toContain('Acme');
      expect(used.body).not.toContain('/branding/');
      // The page's CSP loads the logo and the stylesheet from 'self', and nothing inline.
      expect(String(done.headers['content-security-policy'])).toContain("img-src 'self'");
      expect(String(done.headers['content-security-policy'])).toContain("style-src 'self'");
    });
  });
});

describe.each(ENGINES)('the OAuth pages wear the branding on %s', (engine) => {
  let o: OAuthTenant;
  beforeAll(async () => {
    o = await startOAuthTenant(engine);
    await changeBranding(o.t.ctx, o.tenant.serverId, { displayName: 'Acme Payroll', accentColor: '#7c3aed', logo: Buffer.from(SVG_LOGO) }, CLI_ACTOR);
  });
  afterAll(() => o.close());

  it('shows the success page and a refusal page in the branding; an unknown state stays anonymous; a redirect stays a redirect', async () => {
    const { logoUrl } = await readBranding(o.t.ctx, o.tenant.serverId);
    const { response } = await o.connect('u_oauth_brand');
    expect(response.statusCode).toBe(200);
    expect(response.body).toContain('<span class="brand-name">Acme Payroll</span>');
    expect(response.body).toContain(`<img class="brand-logo" src="${logoUrl}" alt="">`);
    expect(response.body).toContain('href="/branding/style-7c3aed.css"');

    const flow = await o.start({ externalUserId: 'u_oauth_deny' });
    const denied = await o.callback(await o.as.approve(flow.authorizationUrl, { deny: true }));
    expect(denied.statusCode).toBe(400);
    expect(denied.body).toContain('<span class="brand-name">Acme Payroll</span>');
    expect(visible(denied.body)).toContain('Acme did not grant access (access_denied).');

    const unknown = await o.t.app.inject({ method: 'GET', url: '/oauth/callback?state=nothing&code=x' });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.body).not.toContain('Acme Payroll');
    expect(unknown.body).not.toContain('/branding/');

    const redirected = await o.connect('u_oauth_redirect', { redirectUri: APP_REDIRECT });
    expect(redirected.response.statusCode).toBe(303);
  });
});
