/**
 * "Team" over app.inject (CONTRACT 9): an invitation's link shown once, joining with it (single-use,
 * 7 days, revocable; 410 for a link that no longer works and 404 for an unknown one, neither naming
 * the account or the email), bad invitations each refused with one message and nothing stored, role
 * changes and removals with effect on the next request, the owners' rule, and the last owner who stays.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/primitives/digest.js';
import { invite } from '../../src/services/team/invitations.js';
import { OPERATOR } from '../../src/services/team/team-actor.js';
import { csrfOf, newSignedInUser, userByEmail, visible } from '../helpers/dashboard-session.js';
import { ENGINES } from '../helpers/databases.js';
import { leaked, sqliteFilesText, storedRowsText } from '../helpers/secret-scan.js';
import { changeRoleOnPage, INVITE, invitedUser, inviteOnPage, JOIN, joinWithLink, PASSWORD, pathOf, removeOnPage, TEAM } from '../helpers/team.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

const ROLE_REFUSED = /Your role \((viewer|developer)\) cannot do this\./;

describe.each(ENGINES)('Team on %s', (engine) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(engine);
  });
  afterAll(() => t.close());

  let made = 0;
  /** A fresh email for an invited person. */
  const newEmail = (name: string) => {
    made += 1;
    return `${name}-${made}-${engine}@team.example`;
  };
  const newOwner = () => newSignedInUser(t.app, t.ctx.store.db, 'Team');
  const invitationRows = (accountId: string) => t.ctx.store.db.selectFrom('team_invitations').selectAll().where('account_id', '=', accountId).execute();
  const roleOf = async (email: string) => (await t.ctx.store.db.selectFrom('account_users').select('role').where('email', '=', email).executeTakeFirst())?.role;
  const events = (accountId: string, action: string) =>
    t.ctx.store.db.selectFrom('audit_events').selectAll().where('account_id', '=', accountId).where('action', '=', action).execute();

  it('finds Team between Developer and Audit, invites, and shows the link once with Copy', async () => {
    const { client, accountId, email: ownerEmail } = await newOwner();
    const page = await client.get(TEAM);
    expect(page.statusCode).toBe(200);
    expect(page.body).toMatch(/>Developer<\/a><a href="\/dashboard\/team" aria-current="page">Team<\/a><a href="\/dashboard\/audit">Audit<\/a>/);
    expect(visible(page.body, ' ')).toContain(ownerEmail);
    expect(page.body).toContain('<label for="field-email">Email</label>');
    expect(page.body).toContain('<button type="submit">Invite</button>');
    expect(visible(page.body)).toContain('No pending invitations.');
    // An owner may invite any role.
    for (const role of ['owner', 'admin', 'developer', 'viewer']) expect(page.body).toContain(`<option value="${role}"`);

    const invited = newEmail('dev');
    const { response, url, token } = await inviteOnPage(client, invited.toUpperCase(), 'developer');
    expect(response.statusCode).toBe(200);
    expect(url).toBe(`http://keyward.test/dashboard/join/${token}`);
    expect(response.body).toContain('data-copy="shown-once-value">Copy</button>');
    expect(visible(response.body)).toContain('Copy it now: it will not be shown again.');
    expect(visible(response.body)).toContain(`Send this link to ${invited} yourself`);

    // A second visit lists the invitation, lower-cased, without its link.
    const again = await client.get(TEAM);
    expect(again.body).not.toContain(token!);
    const row = visible(again.body, ' ');
    expect(row).toMatch(new RegExp(`${invited.replace(/[.+]/g, '\\$&')}\\s+Developer\\s+\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2} UTC\\s+Revoke invitation`));
    const [stored] = await invitationRows(accountId);
    expect(stored).toMatchObject({ email: invited, role: 'developer', token_digest: sha256Hex(token!), used_at: null, revoked_at: null });
    expect(stored!.id).toMatch(/^inv_[0-9a-f]{28}$/);
    expect(Date.parse(stored!.expires_at) - t.clock.now().getTime()).toBe(7 * 86_400_000);
    // Audited with who and what, never the link.
    const [event] = await events(accountId, 'user.invited');
    expect(JSON.parse(event!.detail)).toEqual({ email: invited, role: 'developer' });
    expect(event!.actor).toMatch(/^user:usr_/);
    expect(JSON.stringify(event)).not.toContain(token!);
    expect(t.logs.join('\n')).not.toContain(token!);
  });

  it('joins with the link: the new user is signed in, with the invited role, and signs in again with the chosen password', async () => {
    const { client, accountId } = await newOwner();
    const invited = newEmail('joiner');
    const { url, token } = await inviteOnPage(client, invited, 'developer');
    const stranger = await joinWithLink(t.app, url!, 'short');
    // A password against the rules: the page again, with the message beside the field; nothing made.
    expect(stranger.response.statusCode).toBe(422);
    expect(stranger.response.body).toContain('id="field-password-error">The password must be 8 to 1024 characters.</p>');
    expect(await roleOf(invited)).toBeUndefined();

    const page = await stranger.client.get(pathOf(url!));
    expect(page.statusCode).toBe(200);
    const text = visible(page.body);
    expect(text).toContain(`Join ${(await t.ctx.store.accounts.nameOf(accountId))!}`);
    expect(page.body).toContain(`value="${invited}" readonly`);
    expect(page.body).toContain('<label for="field-password">Password</label>');

    const { client: joiner, response } = await joinWithLink(t.app, url!);
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe('/dashboard/servers');
    const home = await joiner.get('/dashboard/team');
    expect(home.statusCode).toBe(200);
    expect(visible(home.body)).toContain(`${invited} (you)`);
    // A developer sees the team and none of its forms.
    expect(home.body).not.toContain(`action="${INVITE}"`);
    expect(home.body).not.toContain('action="/dashboard/team/role"');
    expect(home.body).not.toContain('action="/dashboard/team/remove"');
    expect(visible(home.body)).toContain('Your role (developer) can see the team but not invite, change or remove anyone.');

    const user = await userByEmail(t.ctx.store.db, invited);
    expect(user.account_id).toBe(accountId);
    expect(await roleOf(invited)).toBe('developer');
    const [invitation] = await invitationRows(accountId);
    expect(invitation).toMatchObject({ used_by: user.id });
    expect(invitation!.used_at).not.toBeNull();
    const [joined] = await events(accountId, 'user.joined');
    expect(joined).toMatchObject({ actor: `user:${user.id}`, target_id: user.id });
    expect(JSON.parse(joined!.detail)).toMatchObject({ email: invited, role: 'developer' });

    // The owner's page: the new user with their role and a last sign-in, no pending invitation left.
    const team = visible((await client.get(TEAM)).body, ' ');
    expect(team).toContain(invited);
    expect(team).toContain('No pending invitations.');
    expect(team).not.toContain(token!);

    // The chosen password signs in through the ordinary form.
    const again = await joinWithLink(t.app, url!);
    expect(again.response.statusCode).toBe(410);
    const signIn = await again.client.submit('/dashboard/sign-in', '/dashboard/sign-in', { email: invited, password: PASSWORD });
    expect(signIn.statusCode).toBe(303);
  });

  /** The page of a link that no longer works: 410, naming neither the account nor the email. */
  async function expectGone(url: string, accountName: string, email: string, says: string) {
    for (const response of [(await joinWithLink(t.app, url)).response]) {
      expect(response.statusCode).toBe(410);
      expect(visible(response.body)).toContain(says);
      expect(response.body).not.toContain(accountName);
      expect(response.body).not.toContain(email);
    }
  }

  it('a link joins once: the second join is the 410 page, as is a second POST of the same form', async () => {
    const { client, accountId } = await newOwner();
    const accountName = (await t.ctx.store.accounts.nameOf(accountId))!;
    const invited = newEmail('once');
    const { url } = await inviteOnPage(client, invited, 'viewer');
    // Two browsers open the link; the first to post joins, the second is told the link was used.
    const first = await joinWithLink(t.app, url!);
    expect(first.response.statusCode).toBe(303);
    await expectGone(url!, accountName, invited, 'This invitation link was used already');
    expect(await t.ctx.store.db.selectFrom('account_users').select('id').where('email', '=', invited).execute()).toHaveLength(1);
  });

  it('a revoked link is 410 and an expired one (7 days on) too; an unknown or malformed one is the 404 page', async () => {
    const { client, accountId } = await newOwner();
    const accountName = (await t.ctx.store.accounts.nameOf(accountId))!;
    const late = newEmail('late');
    const revoked = newEmail('revoked');
    const expiring = await inviteOnPage(client, late, 'viewer');
    const revoking = await inviteOnPage(client, revoked, 'admin');

    // "Revoke invitation" behind a confirmation page.
    const pending = (await invitationRows(accountId)).find((i) => i.email === revoked)!;
    const revokeUrl = `${TEAM}/invitations/revoke`;
    expect((await client.get(TEAM)).body).toContain(
      `<form method="get" action="${revokeUrl}"><input type="hidden" name="invitation" value="${pending.id}"><button type="submit" class="danger" aria-label="Revoke the invitation of ${revoked}">Revoke invitation</button></form>`,
    );
    const confirm = await client.get(`${revokeUrl}?invitation=${pending.id}`);
    expect(confirm.statusCode).toBe(200);
    expect(visible(confirm.body)).toContain(`Revoke the invitation of ${revoked} (admin, until`);
    expect(confirm.body).toContain(`<a href="${TEAM}">Cancel</a>`);
    const done = await client.post(revokeUrl, { csrf: csrfOf(confirm.body), invitation: pending.id });
    expect(done.statusCode).toBe(303);
    expect(done.headers.location).toBe(`${TEAM}?notice=invitation-revoked`);
    const after = await client.get(done.headers.location as string);
    expect(after.body).toContain('<p class="notice" role="status">Invitation revoked. Its link no longer works.</p>');
    expect(visible(after.body)).not.toContain(revoked);
    // Again: nothing left to revoke.
    const twice = await client.post(revokeUrl, { csrf: csrfOf(after.body), invitation: pending.id });
    expect(twice.headers.location).toBe(`${TEAM}?notice=invitation-not-pending`);
    expect(await events(accountId, 'invitation.revoked')).toHaveLength(1);
    await expectGone(revoking.url!, accountName, revoked, 'This invitation link was revoked.');

    // Unknown and malformed tokens alike: the 404 page, for the page and for the form.
    for (const path of [`${JOIN}/${'A'.repeat(43)}`, `${JOIN}/not-a-token`, `${JOIN}/${expiring.token!.slice(0, 42)}`]) {
      const response = await t.app.inject({ method: 'GET', url: path });
      expect(response.statusCode, path).toBe(404);
      expect(visible(response.body)).toContain('Page not found');
    }

    // Still good a second before its 7 days end, gone at the end.
    t.clock.advance(7 * 86_400 - 1);
    expect((await t.app.inject({ method: 'GET', url: pathOf(expiring.url!) })).statusCode).toBe(200);
    t.clock.advance(1);
    await expectGone(expiring.url!, accountName, late, 'This invitation link has expired');
    expect(await roleOf(late)).toBeUndefined();
  });

  it('refuses bad invitations with one clear message each, beside the field, and stores nothing', async () => {
    const { client, accountId, email: ownerEmail } = await newOwner();
    const admin = newEmail('admin');
    const adminClient = await invitedUser(t.app, client, admin, 'admin');
    const before = (await invitationRows(accountId)).length;

    const malformed = await inviteOnPage(client, 'not-an-email', 'viewer');
    expect(malformed.response.statusCode).toBe(422);
    expect(malformed.response.body).toContain('<p class="error" id="field-email-error">The email address is not valid.</p>');
    expect(malformed.response.body).toContain('value="not-an-email"');
    expect(malformed.url).toBeUndefined();

    const empty = await inviteOnPage(client, '  ', 'viewer');
    expect(empty.response.statusCode).toBe(422);
    expect(empty.response.body).toContain('id="field-email-error">Enter the email of the person to invite.</p>');

    // Already a user of this account: the owner, typed in capitals, and the admin who joined.
    for (const taken of [ownerEmail.toUpperCase(), admin]) {
      const refused = await inviteOnPage(client, taken, 'viewer');
      expect(refused.response.statusCode).toBe(422);
      expect(refused.response.body).toContain(`id="field-email-error">This account already has a user with the email ${taken.toLowerCase()}.</p>`);
    }

    // An admin is offered roles up to admin, and a forged "owner" is refused beside the role.
    const adminPage = await adminClient.get(TEAM);
    expect(adminPage.body).toContain('<option value="admin"');
    expect(adminPage.body).not.toContain('<option value="owner"');
    const above = await inviteOnPage(adminClient, newEmail('boss'), 'owner');
    expect(above.response.statusCode).toBe(403);
    expect(above.response.body).toContain('<p class="error" id="field-role-error">You can invite at most your own role (admin).</p>');
    expect(above.url).toBeUndefined();

    expect(await invitationRows(accountId)).toHaveLength(before);
    expect(await events(accountId, 'user.invited')).toHaveLength(before);
    // What the admin may do, it does.
    expect((await inviteOnPage(adminClient, newEmail('peer'), 'admin')).url).toBeDefined();
  });

  it('refuses to join with an email that signs in to another account, and changes nothing: the link stays pending', async () => {
    const { client, accountId } = await newOwner();
    const other = await newOwner();
    const { url } = await inviteOnPage(client, other.email, 'viewer');
    const refused = await joinWithLink(t.app, url!);
    expect(refused.response.statusCode).toBe(422);
    expect(visible(refused.response.body)).toContain('This email already signs in to Keyward, so it cannot join another account');
    expect(refused.client.cookies.has('keyward_session')).toBe(false);
    expect((await userByEmail(t.ctx.store.db, other.email)).account_id).toBe(other.accountId);
    const [invitation] = await invitationRows(accountId);
    expect(invitation).toMatchObject({ used_at: null, used_by: null, revoked_at: null });
    expect(await events(accountId, 'user.joined')).toHaveLength(0);
  });

  it('refuses a password join where the account requires single sign-on, but for an owner, and changes nothing', async () => {
    const { client, accountId } = await newOwner();
    const asViewer = await inviteOnPage(client, newEmail('viewer'), 'viewer');
    const asOwner = await inviteOnPage(client, newEmail('owner'), 'owner');
    // "Require SSO" as the SSO settings page sets it; what a join reads is the account's policy.
    expect(await t.ctx.store.sso.setRequired(accountId, true)).toBe(true);
    const refused = await joinWithLink(t.app, asViewer.url!);
    expect(refused.response.statusCode).toBe(422);
    expect(visible(refused.response.body)).toContain('requires single sign-on: join with "Join with SSO"');
    expect(refused.client.cookies.has('keyward_session')).toBe(false);
    expect((await invitationRows(accountId)).filter((i) => i.used_at !== null)).toHaveLength(0);
    // Owners keep their password as a break-glass (CONTRACT 9): an owner's invitation joins with one.
    expect((await joinWithLink(t.app, asOwner.url!)).response.statusCode).toBe(303);
    expect(await events(accountId, 'user.joined')).toHaveLength(1);
  });

  it('changes a role from the next request on: a developer made viewer may no longer act, and a viewer posts no team form', async () => {
    const { client, accountId } = await newOwner();
    const dev = newEmail('dev');
    const devClient = await invitedUser(t.app, client, dev, 'developer');
    const devId = (await userByEmail(t.ctx.store.db, dev)).id;
    const page = await client.get(TEAM);
    expect(page.body).toContain(`<select name="role" aria-label="Role of ${dev}">`);
    expect(page.body).toContain('<button type="submit" class="secondary">Change role</button>');

    const changed = await changeRoleOnPage(client, devId, 'viewer');
    expect(changed.statusCode).toBe(303);
    expect(changed.headers.location).toBe(`${TEAM}?notice=role-changed`);
    expect(await roleOf(dev)).toBe('viewer');
    const [event] = await events(accountId, 'user.role_changed');
    expect(JSON.parse(event!.detail)).toEqual({ email: dev, from: 'developer', to: 'viewer' });

    // The same session, its next request: generating a key is a developer's, no longer this user's.
    const keys = '/dashboard/developer/api-keys';
    const refused = await devClient.submit(keys, keys, { label: 'After demotion', environment: 'production', expiresAt: '' });
    expect(refused.statusCode).toBe(403);
    expect(visible(refused.body)).toMatch(ROLE_REFUSED);
    expect(await t.ctx.store.db.selectFrom('account_keys').select('id').where('account_id', '=', accountId).execute()).toHaveLength(0);
    for (const [action, fields] of [
      [INVITE, { email: newEmail('sneaky'), role: 'viewer' }],
      [`${TEAM}/role`, { user: devId, role: 'admin' }],
      [`${TEAM}/remove`, { user: devId }],
    ] as const) {
      const response = await devClient.submit(TEAM, action, fields);
      expect(response.statusCode, action).toBe(403);
      expect(visible(response.body)).toContain('Your role (viewer) cannot do this.');
    }
    expect(await roleOf(dev)).toBe('viewer');
    expect(await invitationRows(accountId)).toHaveLength(1);
  });

  it('removes a user behind a confirmation page: their session ends at their next request', async () => {
    const { client, accountId } = await newOwner();
    const accountName = (await t.ctx.store.accounts.nameOf(accountId))!;
    const dev = newEmail('leaver');
    const devClient = await invitedUser(t.app, client, dev, 'developer');
    const devId = (await userByEmail(t.ctx.store.db, dev)).id;
    expect((await devClient.get('/dashboard/servers')).statusCode).toBe(200);

    const list = await client.get(TEAM);
    expect(list.body).toContain(
      `<form method="get" action="${TEAM}/remove"><input type="hidden" name="user" value="${devId}"><button type="submit" class="danger" aria-label="Remove ${dev}">Remove</button></form>`,
    );
    const confirm = await client.get(`${TEAM}/remove?user=${devId}`);
    expect(visible(confirm.body)).toContain(`Remove ${dev} (developer) from ${accountName}?`);
    const removed = await removeOnPage(client, devId);
    expect(removed.statusCode).toBe(303);
    expect(removed.headers.location).toBe(`${TEAM}?notice=user-removed`);

    const next = await devClient.get('/dashboard/servers');
    expect(next.statusCode).toBe(303);
    expect(next.headers.location).toBe('/dashboard/sign-in');
    expect(await roleOf(dev)).toBeUndefined();
    expect(await t.ctx.store.db.selectFrom('dashboard_sessions').select('id').where('user_id', '=', devId).execute()).toHaveLength(0);
    const [event] = await events(accountId, 'user.removed');
    expect(JSON.parse(event!.detail)).toEqual({ email: dev, role: 'developer' });
    // Another account's user, or one removed already: the 404 page.
    const stranger = await newOwner();
    expect((await client.get(`${TEAM}/remove?user=${stranger.userId}`)).statusCode).toBe(404);
    expect((await client.post(`${TEAM}/remove`, { csrf: csrfOf(list.body), user: devId })).statusCode).toBe(404);
  });

  it('keeps the last owner: neither demoted nor removed, until another owner exists', async () => {
    const { client, accountId, userId: ownerId, email: ownerEmail } = await newOwner();
    for (const refused of [await changeRoleOnPage(client, ownerId, 'admin'), await removeOnPage(client, ownerId)]) {
      expect(refused.statusCode).toBe(409);
      expect(refused.body).toContain('<p class="error summary" role="alert">An account keeps at least one owner.</p>');
    }
    expect(await roleOf(ownerEmail)).toBe('owner');

    const second = newEmail('second-owner');
    const secondClient = await invitedUser(t.app, client, second, 'owner');
    expect((await changeRoleOnPage(client, ownerId, 'admin')).statusCode).toBe(303);
    expect(await roleOf(ownerEmail)).toBe('admin');
    const secondId = (await userByEmail(t.ctx.store.db, second)).id;
    const last = await removeOnPage(secondClient, secondId);
    expect(last.statusCode).toBe(409);
    expect(visible(last.body)).toContain('An account keeps at least one owner.');
    expect(await roleOf(second)).toBe('owner');
    expect(await events(accountId, 'user.removed')).toHaveLength(0);
  });

  it('lets no admin make, change or remove an owner, and an admin changes other roles up to admin', async () => {
    const { client, userId: ownerId, email: ownerEmail } = await newOwner();
    const admin = newEmail('admin');
    const dev = newEmail('dev');
    const adminClient = await invitedUser(t.app, client, admin, 'admin');
    await invitedUser(t.app, client, dev, 'developer');
    const devId = (await userByEmail(t.ctx.store.db, dev)).id;

    // The owner's row has no forms for an admin; the others offer roles up to admin.
    const page = await adminClient.get(TEAM);
    expect(page.body).not.toContain(`value="${ownerId}"`);
    expect(page.body).not.toContain('<option value="owner"');

    const ONLY_OWNERS = 'Only an owner can make an owner, or change or remove one.';
    for (const refused of [
      await changeRoleOnPage(adminClient, devId, 'owner'),
      await changeRoleOnPage(adminClient, ownerId, 'viewer'),
      await removeOnPage(adminClient, ownerId),
    ]) {
      expect(refused.statusCode).toBe(403);
      expect(refused.body).toContain(`<p class="error summary" role="alert">${ONLY_OWNERS}</p>`);
    }
    expect(await roleOf(dev)).toBe('developer');
    expect(await roleOf(ownerEmail)).toBe('owner');

    expect((await changeRoleOnPage(adminClient, devId, 'admin')).statusCode).toBe(303);
    expect(await roleOf(dev)).toBe('admin');
  });

  it("stores an invitation link's token only as its digest: not in any row, nor in the database's files", async () => {
    const { client, accountId } = await newOwner();
    const { token } = await inviteOnPage(client, newEmail('digest'), 'viewer');
    const viaService = await invite(t.ctx, { accountId, email: newEmail('digest-cli'), role: 'admin', actor: OPERATOR });
    const tokens = [token!, viaService.url.split('/').pop()!];
    const rows = await storedRowsText(t.ctx);
    expect(leaked(rows, tokens)).toEqual([]);
    for (const secret of tokens) expect(rows).toContain(sha256Hex(secret));
    if (t.database.file) for (const text of sqliteFilesText(t.database.file)) expect(leaked(text, tokens)).toEqual([]);
    expect(leaked(t.logs.join('\n'), tokens)).toEqual([]);
  });
});
