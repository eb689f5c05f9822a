/**
 * A removal or a demotion counts from the user's next request on every node (CONTRACT 9): three nodes
 * on one PostgreSQL database, as behind a load balancer, each its own process state. The same session
 * cookie works on each; after the change on node 1, the next request on each node is refused or
 * limited. And two owners demoting each other at once on two nodes leave the account one owner.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { invite } from '../../src/services/team/invitations.js';
import { join } from '../../src/services/team/joining.js';
import { OPERATOR, type TeamActor } from '../../src/services/team/team-actor.js';
import { changeRole } from '../../src/services/team/team-users.js';
import { csrfOf, DashboardClient, newSignedInUser, userByEmail, visible } from '../helpers/dashboard-session.js';
import { changeRoleOnPage, invitedUser, PASSWORD, pathOf, removeOnPage } from '../helpers/team.js';
import { type SecondNode, startSecondNode, startTestApp, type TestApp } from '../helpers/test-app.js';

const SLOW = 120_000;

describe('the team on three nodes of one PostgreSQL database', () => {
  let t: TestApp;
  let others: SecondNode[];
  let nodes: (TestApp | SecondNode)[];

  beforeAll(async () => {
    t = await startTestApp('postgres');
    others = [await startSecondNode(t), await startSecondNode(t)];
    nodes = [t, ...others];
  }, SLOW);
  afterAll(async () => {
    for (const node of others) await node.close();
    await t.close();
  });

  let made = 0;
  const newEmail = (name: string) => {
    made += 1;
    return `${name}-${made}@nodes.example`;
  };

  /** A browser on each node holding the same session cookie as `signedIn`. */
  function onEveryNode(signedIn: DashboardClient): DashboardClient[] {
    return nodes.map((node) => {
      const client = new DashboardClient(node.app);
      for (const [name, value] of signedIn.cookies) client.cookies.set(name, value);
      return client;
    });
  }

  it('signs a removed user out at their next request on every node', { timeout: SLOW }, async () => {
    const { client: owner } = await newSignedInUser(t.app, t.ctx.store.db, 'Nodes');
    const email = newEmail('leaver');
    const browsers = onEveryNode(await invitedUser(t.app, owner, email, 'developer'));
    for (const browser of browsers) expect((await browser.get('/dashboard/servers')).statusCode).toBe(200);

    const removed = await removeOnPage(owner, (await userByEmail(t.ctx.store.db, email)).id);
    expect(removed.statusCode).toBe(303);
    for (const [i, browser] of browsers.entries()) {
      const next = await browser.get('/dashboard/servers');
      expect(next.statusCode, `node ${i + 1}`).toBe(303);
      expect(next.headers.location).toBe('/dashboard/sign-in');
    }
  });

  it("refuses an admin demoted to viewer an admin's POST on every node, and changes nothing", { timeout: SLOW }, async () => {
    const { client: owner, accountId } = await newSignedInUser(t.app, t.ctx.store.db, 'Nodes');
    const email = newEmail('admin');
    const browsers = onEveryNode(await invitedUser(t.app, owner, email, 'admin'));
    // An admin on every node: the Team page offers them "Invite".
    for (const browser of browsers) expect((await browser.get('/dashboard/team')).body).toContain('<button type="submit">Invite</button>');

    const demoted = await changeRoleOnPage(owner, (await userByEmail(t.ctx.store.db, email)).id, 'viewer');
    expect(demoted.statusCode).toBe(303);
    for (const [i, browser] of browsers.entries()) {
      const csrf = csrfOf((await browser.get('/dashboard/servers')).body);
      // Creating a server is an admin's: the role is judged before the form's one-time nonce.
      const refused = await browser.post('/dashboard/servers', { csrf, once: 'n'.repeat(24), name: `Node ${i + 1}`, mode: 'business' });
      expect(refused.statusCode, `node ${i + 1}`).toBe(403);
      expect(visible(refused.body)).toContain('Your role (viewer) cannot do this.');
    }
    expect(await t.ctx.store.db.selectFrom('servers').select('id').where('account_id', '=', accountId).execute()).toHaveLength(0);
  });

  it('keeps one owner when two owners demote each other at once on two nodes', { timeout: SLOW }, async () => {
    const [, second] = nodes;
    const { accountId, userId: firstId } = await newSignedInUser(t.app, t.ctx.store.db, 'Nodes');
    const invitation = await invite(t.ctx, { accountId, email: newEmail('co-owner'), role: 'owner', actor: OPERATOR });
    const token = pathOf(invitation.url).split('/').pop()!;
    const joined = await join(t.ctx, { token, password: PASSWORD, device: { userAgent: undefined, address: '127.0.0.1' } });
    if (!joined.joined) throw new Error(`the co-owner could not join: ${joined.state}`);
    const secondId = joined.userId;
    const owner = (userId: string): TeamActor => ({ kind: 'user', actor: `user:${userId}`, userId, accountId, role: 'owner' });

    const outcomes = await Promise.allSettled([
      changeRole(t.ctx, { userId: secondId, role: 'admin', actor: owner(firstId) }),
      changeRole(second!.ctx, { userId: firstId, role: 'admin', actor: owner(secondId) }),
    ]);
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    const refused = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
    expect(refused.reason).toMatchObject({ code: 'last_owner', detail: 'An account keeps at least one owner.' });
    const owners = await t.ctx.store.db.selectFrom('account_users').select('id').where('account_id', '=', accountId).where('role', '=', 'owner').execute();
    expect(owners).toHaveLength(1);
  });
});
