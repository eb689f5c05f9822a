/**
 * Sign-ins in the audit trail (CONTRACT 9): a good one is recorded as the user, with the address and
 * the device, and sets the user's last sign-in; a failed one for an email that has a user is recorded
 * in that user's account as a browser's, saying whether the password was wrong or the email locked
 * out; an email without a user records nothing. No password reaches the trail or a log line.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { iso } from '../../src/primitives/clock.js';
import { createAccount } from '../../src/services/users/accounts.js';
import { MAX_SIGN_IN_ATTEMPTS } from '../../src/services/users/sign-in-attempts.js';
import { browserOn } from '../helpers/dashboard-device.js';
import { DashboardClient, visible } from '../helpers/dashboard-session.js';
import { ENGINES } from '../helpers/databases.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

const SAFARI_ON_IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4.1 Mobile/15E148 Safari/604.1';
const ADDRESS = '192.0.2.44';

/** A browser on an iPhone at ADDRESS. */
const iphone = (app: FastifyInstance) => browserOn(app, { userAgent: SAFARI_ON_IPHONE, address: ADDRESS });

describe.each(ENGINES)('the sign-in audit on %s', (engine) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(engine);
  });
  afterAll(() => t.close());

  let made = 0;
  /** A user with a password of their own (each test's passwords differ, so a leak names its test). */
  async function newUser() {
    made += 1;
    const email = `audited-${made}@sign-in.example`;
    const password = `right-password-${made}-${engine}`;
    const { userId, accountId } = await createAccount(t.ctx, { name: `Audited ${made}`, email, password });
    return { email, password, userId, accountId };
  }
  const signIn = (client: DashboardClient, email: string, password: string) => client.submit('/dashboard/sign-in', '/dashboard/sign-in', { email, password });
  const eventsOf = (accountId: string) =>
    t.ctx.store.db
      .selectFrom('audit_events')
      .select(['action', 'actor', 'target_id', 'detail', 'created_at'])
      .where('account_id', '=', accountId)
      .orderBy('id')
      .execute();
  const allEvents = () => t.ctx.store.db.selectFrom('audit_events').selectAll().orderBy('id').execute();
  const lastSignIn = async (userId: string) =>
    (await t.ctx.store.db.selectFrom('account_users').select('last_sign_in_at').where('id', '=', userId).executeTakeFirstOrThrow()).last_sign_in_at;

  it("records a good sign-in as the user, with the address and the device, and sets the user's last sign-in", async () => {
    const { email, password, userId, accountId } = await newUser();
    expect(await lastSignIn(userId)).toBeNull();
    t.clock.advance(60);
    const at = iso(t.clock.now());
    const client = iphone(t.app);
    expect((await signIn(client, email, password)).statusCode).toBe(303);
    expect(await eventsOf(accountId)).toEqual([
      {
        action: 'user.signed_in',
        actor: `user:${userId}`,
        target_id: userId,
        detail: JSON.stringify({ address: ADDRESS, device: 'Safari on iOS' }),
        created_at: at,
      },
    ]);
    expect(await lastSignIn(userId)).toBe(at);

    const audit = visible((await client.get('/dashboard/audit')).body, ' ');
    expect(audit).toContain(`${email} Signed in on Safari on iOS from ${ADDRESS}`);
  });

  it("records a wrong password and a lock-out in the email's account, as a browser's, without the password", async () => {
    const { email, password, userId, accountId } = await newUser();
    const client = iphone(t.app);
    const guesses = Array.from({ length: MAX_SIGN_IN_ATTEMPTS }, (_, i) => `wrong-guess-${i}-${engine}`);
    for (const guess of guesses) expect((await signIn(client, email, guess)).statusCode).toBe(401);
    // Locked out now: even the right password is not checked.
    expect((await signIn(client, email, password)).statusCode).toBe(429);

    const failure = (kind: string) => ({
      action: 'user.sign_in_failed',
      actor: 'browser',
      target_id: userId,
      detail: JSON.stringify({ email, address: ADDRESS, failure: kind }),
      created_at: iso(t.clock.now()),
    });
    expect(await eventsOf(accountId)).toEqual([...guesses.map(() => failure('wrong_password')), failure('locked_out')]);
    expect(await lastSignIn(userId)).toBeNull();

    // As the account's owner sees it on the Audit page, once the lock has passed.
    t.clock.advance(16 * 60);
    const owner = new DashboardClient(t.app);
    expect((await signIn(owner, email, password)).statusCode).toBe(303);
    const audit = visible((await owner.get('/dashboard/audit')).body, ' ');
    expect(audit).toContain(`A browser Failed to sign in as ${email} from ${ADDRESS}: wrong password`);
    expect(audit).toContain(`A browser Failed to sign in as ${email} from ${ADDRESS}: locked out after too many failed sign-ins, password not checked`);

    const trail = JSON.stringify(await allEvents());
    const logs = t.logs.join('\n');
    for (const secret of [password, ...guesses]) {
      expect(trail).not.toContain(secret);
      expect(logs).not.toContain(secret);
    }
  });

  it('records nothing for an email without a user, and answers it as a known one', async () => {
    const known = await newUser();
    const before = new Set((await allEvents()).map((e) => e.id));
    const unknownEmail = `nobody-${made}@sign-in.example`;
    const client = iphone(t.app);
    const unknownAnswer = await signIn(client, unknownEmail, `unknown-guess-${engine}`);
    const knownAnswer = await signIn(client, known.email, `known-guess-${engine}`);
    expect(unknownAnswer.statusCode).toBe(401);
    expect(knownAnswer.statusCode).toBe(401);
    const page = (response: { body: string }, email: string) => response.body.replace(/name="csrf" value="[^"]+"/, '').replaceAll(email, 'EMAIL');
    expect(page(unknownAnswer, unknownEmail)).toBe(page(knownAnswer, known.email));

    // One event, the known email's, in its account; nothing anywhere names the unknown one.
    const added = (await allEvents()).filter((e) => !before.has(e.id));
    expect(added.map((e) => ({ account: e.account_id, action: e.action, email: JSON.parse(e.detail).email }))).toEqual([
      { account: known.accountId, action: 'user.sign_in_failed', email: known.email },
    ]);
    expect(JSON.stringify(await allEvents())).not.toContain(unknownEmail);
    expect(t.logs.join('\n')).not.toContain(`unknown-guess-${engine}`);
  });
});
