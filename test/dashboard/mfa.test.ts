/**
 * One-time codes for dashboard users (CONTRACT 9, issue 20 item 5), on both engines, over app.inject
 * with the test clock: codes are computed here with `otpauth` from the secret the enrolment page shows,
 * as an authenticator app would.
 *
 * Turning codes on (the QR code inline as SVG under the dashboard's CSP, the secret as text, one code
 * confirms, ten recovery codes once); sign-in then asks for a code and no session exists until it is
 * accepted; a code is accepted once (the confirming one included, and on two nodes at once), one step
 * either side but not two; the sixth wrong code in a row is refused with the lock-out, and so is the
 * right one until it ends, and a right password again does not start the count afresh; a recovery
 * code works once; "New recovery codes" and "Turn off" each want a code; "Require MFA" makes a
 * password user without codes turn them on before any session. The secret is stored only sealed and a
 * master-key rotation reseals it; no code or secret reaches a stored row, a log line or an audit detail.
 */
import { randomBytes } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DASHBOARD_CSP } from '../../src/dashboard/layout.js';
import {
  CONFIRM_URL,
  ENROL_URL,
  MFA_POLICY_URL,
  RECOVERY_CODES_URL,
  SIGN_IN_CODE_URL,
  SIGN_IN_RECOVERY_URL,
  TURN_OFF_URL,
} from '../../src/dashboard/mfa-views.js';
import { newId } from '../../src/primitives/ids.js';
import { rotateMasterKey } from '../../src/services/sealing/master-key-rotation.js';
import { hashPassword } from '../../src/services/users/passwords.js';
import { LOCK_SECONDS, MAX_SIGN_IN_ATTEMPTS } from '../../src/services/users/sign-in-attempts.js';
import { cliEnv, cliJson } from '../helpers/cli-process.js';
import { auditEventsOf, type DashboardClient as Client, DashboardClient, hiddenFieldsOf, newSignedInUser, visible } from '../helpers/dashboard-session.js';
import { ENGINES } from '../helpers/databases.js';
import { keyIdOf } from '../helpers/master-key.js';
import { leaked, sqliteFilesText, storedRowsText } from '../helpers/secret-scan.js';
import { inviteOnPage, joinWithLink } from '../helpers/team.js';
import { startSecondNode, startTestApp, type TestApp } from '../helpers/test-app.js';

const PASSWORD = 'correct horse battery staple';
const SECURITY = '/dashboard/security';
const HOME = '/dashboard/servers';
const ASKS_FOR_CODE = 'Enter the code from your authenticator app';
const WRONG_CODE = 'That code is not right.';
const REUSED_CODE = 'That code was used already.';
const LOCKED = 'Too many failed sign-ins for this email. Try again after';
const LAST_ATTEMPT = 'Too many failed sign-ins for this email: try again after';
const RECOVERY_CODE = /^[0-9a-hjkmnp-tv-z]{4}-[0-9a-hjkmnp-tv-z]{4}-[0-9a-hjkmnp-tv-z]{4}$/;

/** What an authenticator app computes from the secret it was given. */
const authenticator = (secret: string) => new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 });

const secretOn = (body: string) => {
  const match = /id="totp-secret" class="secret" type="text" readonly value="([A-Z2-7]+)"/.exec(body);
  if (!match) throw new Error(`no secret on the page: ${visible(body).slice(0, 300)}`);
  return match[1]!;
};

const recoveryCodesOn = (body: string) => {
  const match = /<textarea id="recovery-codes"[^>]*>([^<]*)<\/textarea>/.exec(body);
  if (!match) throw new Error(`no recovery codes on the page: ${visible(body).slice(0, 300)}`);
  return match[1]!.split('\n');
};

const hasSessionCookie = (response: { headers: Record<string, unknown> }) => /keyward_session=[^;]/.test(String(response.headers['set-cookie'] ?? ''));

describe.each(ENGINES)('one-time codes on %s', (engine) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(engine);
  });
  afterAll(() => t?.close());

  /** The code of the step `steps` away from now. */
  const codeAt = (secret: string, steps = 0) => authenticator(secret).generate({ timestamp: t.clock.now().getTime() + steps * 30_000 });
  /** Six digits that are the code of none of the steps accepted now. */
  const wrongCode = (secret: string) => {
    const accepted = new Set([-1, 0, 1].map((steps) => codeAt(secret, steps)));
    for (let n = 0; ; n += 1) {
      const code = String(n).padStart(6, '0');
      if (!accepted.has(code)) return code;
    }
  };
  /** To the next time step: the code of the step before is accepted no more once a later one was. */
  const nextStep = () => t.clock.advance(30);

  const sessionsOf = async (userId: string) =>
    (await t.ctx.store.db.selectFrom('dashboard_sessions').select('id').where('user_id', '=', userId).execute()).length;
  const auditOf = (accountId: string, action: string) => auditEventsOf(t.ctx.store.db, accountId, action);

  /** "Security" → "Turn on": the enrolment page, its secret, and the page that answers its confirmation. */
  async function turnOn(client: Client) {
    const page = await client.submit(SECURITY, ENROL_URL, {});
    expect(page.statusCode, visible(page.body).slice(0, 300)).toBe(200);
    const secret = secretOn(page.body);
    const confirmed = await client.post(CONFIRM_URL, { ...hiddenFieldsOf(page.body, CONFIRM_URL), code: codeAt(secret) });
    expect(confirmed.statusCode, visible(confirmed.body).slice(0, 300)).toBe(200);
    return { page, secret, confirmed, recoveryCodes: recoveryCodesOn(confirmed.body) };
  }

  /** A new account's user with codes on, signed out, the clock one step past the confirming code. */
  async function userWithCodes(name: string) {
    const user = await newSignedInUser(t.app, t.ctx.store.db, name);
    const on = await turnOn(user.client);
    expect((await user.client.submit(HOME, '/dashboard/sign-out', {})).statusCode).toBe(303);
    nextStep();
    return { ...user, ...on };
  }

  /** A new browser through the password: sent on to the second step, with no session. */
  async function passwordStep(email: string, on = t.app) {
    const client = new DashboardClient(on);
    const answer = await client.submit('/dashboard/sign-in', '/dashboard/sign-in', { email, password: PASSWORD });
    expect(answer.statusCode, visible(answer.body).slice(0, 300)).toBe(303);
    expect(answer.headers.location).toBe(SIGN_IN_CODE_URL);
    expect(hasSessionCookie(answer)).toBe(false);
    return client;
  }

  const sendCode = (client: Client, code: string) => client.submit(SIGN_IN_CODE_URL, SIGN_IN_CODE_URL, { code });
  const sendRecoveryCode = (client: Client, recoveryCode: string) => client.submit(SIGN_IN_RECOVERY_URL, SIGN_IN_RECOVERY_URL, { recoveryCode });
  const signedIn = async (client: Client) => (await client.get(HOME)).statusCode === 200;

  it('turns on with an inline SVG QR code and the secret as text, confirmed by one code; ten recovery codes shown once', async () => {
    const { client, userId, accountId, email } = await newSignedInUser(t.app, t.ctx.store.db, 'Enrol');
    const security = await client.get(SECURITY);
    const text = visible(security.body);
    expect(text).toContain('One-time codes');
    // The section comes before the sessions.
    expect(text.indexOf('One-time codes')).toBeLessThan(text.indexOf('Sessions'));
    expect(security.body).toContain(`<form method="post" action="${ENROL_URL}">`);

    const page = await client.submit(SECURITY, ENROL_URL, {});
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-security-policy']).toBe(DASHBOARD_CSP);
    expect(DASHBOARD_CSP).not.toContain('data:');
    // The QR code is the <svg> element itself: no image to fetch, no data: URL, no script of its own, no inline style.
    expect(page.body).toMatch(/<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" width="200" height="200" viewBox="[0-9 ]+" shape-rendering="crispEdges"><path /);
    expect(page.body).not.toMatch(/<img|data:|style=|<script(?! src="\/assets\/dashboard\.js")/);
    const secret = secretOn(page.body);
    expect(Secret.fromBase32(secret).bytes).toHaveLength(20);
    expect(visible(page.body)).toContain('Code');
    expect(page.body).toContain('>Confirm</button>');

    // A wrong code confirms nothing; the same secret is shown again.
    const wrong = await client.post(CONFIRM_URL, { ...hiddenFieldsOf(page.body, CONFIRM_URL), code: wrongCode(secret) });
    expect(wrong.statusCode).toBe(422);
    expect(visible(wrong.body)).toContain('That code does not match the secret above.');
    expect(secretOn(wrong.body)).toBe(secret);
    expect(visible((await client.get(SECURITY)).body)).toContain('Off.');

    const confirmed = await client.post(CONFIRM_URL, { ...hiddenFieldsOf(page.body, CONFIRM_URL), code: codeAt(secret) });
    expect(confirmed.statusCode).toBe(200);
    const codes = recoveryCodesOn(confirmed.body);
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const code of codes) expect(code).toMatch(RECOVERY_CODE);
    expect(confirmed.body).toContain('data-copy="recovery-codes">Copy</button>');

    // Shown once: the Security page says the codes are on, and shows none of them.
    const after = await client.get(SECURITY);
    expect(visible(after.body)).toContain('Sign-in asks for a code from your authenticator app. 10 of 10 recovery codes left.');
    for (const code of codes) expect(after.body).not.toContain(code);
    expect(after.body).not.toContain(secret);
    const stored = await t.ctx.store.db.selectFrom('user_recovery_codes').select(['code_digest', 'used_at']).where('user_id', '=', userId).execute();
    expect(stored).toHaveLength(10);
    expect(stored.every((row) => /^[0-9a-f]{64}$/.test(row.code_digest) && row.used_at === null)).toBe(true);
    expect(await auditOf(accountId, 'mfa.enabled')).toEqual([{ actor: `user:${userId}`, target_id: userId, detail: JSON.stringify({ email }) }]);

    // "Turn on" again while on: nothing is replaced.
    const again = await client.submit(SECURITY, ENROL_URL, {});
    expect(again.statusCode).toBe(303);
    expect(visible((await client.get(again.headers.location as string)).body)).toContain('One-time codes are on already.');
  });

  it('asks for the code after the password, with no session until the right code; the same code is never accepted again', async () => {
    const { email, userId, secret, accountId } = await userWithCodes('SecondStep');
    expect(await sessionsOf(userId)).toBe(0);
    const browser = await passwordStep(email);
    expect(await sessionsOf(userId)).toBe(0);
    const page = await browser.get(SIGN_IN_CODE_URL);
    expect(page.statusCode).toBe(200);
    expect(visible(page.body)).toContain(ASKS_FOR_CODE);
    expect(page.body).toMatch(/<label for="field-code">Code<\/label>/);
    expect(page.body).toContain(`<a href="${SIGN_IN_RECOVERY_URL}">Use a recovery code instead</a>`);
    // The pending sign-in opens no page.
    const notYet = await browser.get(HOME);
    expect(notYet.statusCode).toBe(303);
    expect(notYet.headers.location).toBe('/dashboard/sign-in');

    const code = codeAt(secret);
    const accepted = await sendCode(browser, code);
    expect(accepted.statusCode, visible(accepted.body).slice(0, 300)).toBe(303);
    expect(accepted.headers.location).toBe(HOME);
    expect(hasSessionCookie(accepted)).toBe(true);
    expect(await signedIn(browser)).toBe(true);
    expect(await sessionsOf(userId)).toBe(1);
    expect(await auditOf(accountId, 'user.signed_in')).toHaveLength(2);
    // The note of the pending sign-in is gone with it.
    expect(String(accepted.headers['set-cookie'])).toMatch(/keyward_second_step=; [^,]*Max-Age=0/);

    // A second sign-in within the code's window: the same code is refused, and counted.
    const replay = await passwordStep(email);
    const refused = await sendCode(replay, code);
    expect(refused.statusCode).toBe(401);
    expect(visible(refused.body)).toContain(REUSED_CODE);
    expect(hasSessionCookie(refused)).toBe(false);
    expect(await signedIn(replay)).toBe(false);
    expect(await sessionsOf(userId)).toBe(1);
    const failures = (await auditOf(accountId, 'user.sign_in_failed')).map((row) => JSON.parse(row.detail).failure);
    expect(failures).toEqual(['reused_code']);
  });

  it('never accepts the confirming code again', async () => {
    const { client, email, secret } = await (async () => {
      const user = await newSignedInUser(t.app, t.ctx.store.db, 'Confirming');
      return { ...user, ...(await turnOn(user.client)) };
    })();
    expect(await signedIn(client)).toBe(true);
    // Same step as the confirmation: its code is the one the app still shows.
    const browser = await passwordStep(email);
    const refused = await sendCode(browser, codeAt(secret));
    expect(refused.statusCode).toBe(401);
    expect(visible(refused.body)).toContain(REUSED_CODE);
    nextStep();
    expect((await sendCode(browser, codeAt(secret))).statusCode).toBe(303);
  });

  it('accepts a code of the step before or after the current one, and refuses one two steps away', async () => {
    const { email, secret } = await userWithCodes('Window');
    t.clock.advance(5 * 30);
    const browser = await passwordStep(email);
    for (const steps of [-2, 2]) {
      const refused = await sendCode(browser, codeAt(secret, steps));
      expect(refused.statusCode, `${steps} steps away`).toBe(401);
      expect(visible(refused.body)).toContain(WRONG_CODE);
    }
    expect((await sendCode(browser, codeAt(secret, -1))).statusCode).toBe(303);
    // The step after: later than the one accepted.
    expect((await sendCode(await passwordStep(email), codeAt(secret, 1))).statusCode).toBe(303);
    // The current step comes before the one just accepted: refused as used.
    const earlier = await sendCode(await passwordStep(email), codeAt(secret, 0));
    expect(earlier.statusCode).toBe(401);
    expect(visible(earlier.body)).toContain(REUSED_CODE);
  });

  it('refuses the sixth wrong code in a row with the lock-out, then the right code too until the lock-out ends', async () => {
    const { email, secret, userId, accountId } = await userWithCodes('Lockout');
    const browser = await passwordStep(email);
    const { csrf } = hiddenFieldsOf((await browser.get(SIGN_IN_CODE_URL)).body, SIGN_IN_CODE_URL);
    for (let i = 1; i <= MAX_SIGN_IN_ATTEMPTS; i += 1) {
      const wrong = await sendCode(browser, wrongCode(secret));
      expect(wrong.statusCode, `wrong code ${i}`).toBe(401);
      expect(visible(wrong.body)).toContain(WRONG_CODE);
      // The fifth used the window's last attempt, and says so.
      expect(visible(wrong.body).includes(LAST_ATTEMPT), `wrong code ${i}`).toBe(i === MAX_SIGN_IN_ATTEMPTS);
    }
    const sixth = await sendCode(browser, wrongCode(secret));
    expect(sixth.statusCode).toBe(429);
    expect(visible(sixth.body)).toContain(LOCKED);
    const right = await sendCode(browser, codeAt(secret));
    expect(right.statusCode).toBe(429);
    expect(visible(right.body)).toContain(LOCKED);
    expect(hasSessionCookie(right)).toBe(false);
    expect(await sessionsOf(userId)).toBe(0);
    // The password is locked out as well.
    const client = new DashboardClient(t.app);
    const password = await client.submit('/dashboard/sign-in', '/dashboard/sign-in', { email, password: PASSWORD });
    expect(password.statusCode).toBe(429);
    const failures = (await auditOf(accountId, 'user.sign_in_failed')).map((row) => JSON.parse(row.detail).failure).sort();
    expect(failures).toEqual(['code_locked_out', 'code_locked_out', 'locked_out', ...Array(MAX_SIGN_IN_ATTEMPTS).fill('wrong_code')].sort());

    // The lock-out over (and the pending sign-in long expired): password, then the right code.
    t.clock.advance(LOCK_SECONDS + 1);
    const expired = await browser.post(SIGN_IN_CODE_URL, { csrf: csrf!, code: codeAt(secret) });
    expect(expired.statusCode).toBe(303);
    expect(expired.headers.location).toBe('/dashboard/sign-in?notice=second-step-expired');
    const fresh = await passwordStep(email);
    expect((await sendCode(fresh, codeAt(secret))).statusCode).toBe(303);
    expect(await signedIn(fresh)).toBe(true);
  });

  it('does not start the count afresh when the right password is given again, and clears it with a right code', async () => {
    const { email, secret } = await userWithCodes('Count');
    const first = await passwordStep(email);
    for (let i = 0; i < 3; i += 1) expect((await sendCode(first, wrongCode(secret))).statusCode).toBe(401);
    const second = await passwordStep(email);
    expect((await sendCode(second, wrongCode(secret))).statusCode).toBe(401);
    const fifth = await sendCode(second, wrongCode(secret));
    expect(fifth.statusCode).toBe(401);
    expect(visible(fifth.body)).toContain(LAST_ATTEMPT);
    expect((await sendCode(second, codeAt(secret))).statusCode).toBe(429);

    // A right code clears it: five more wrong ones are each checked.
    t.clock.advance(LOCK_SECONDS + 1);
    expect((await sendCode(await passwordStep(email), codeAt(secret))).statusCode).toBe(303);
    nextStep();
    const third = await passwordStep(email);
    for (let i = 1; i < MAX_SIGN_IN_ATTEMPTS; i += 1) expect((await sendCode(third, wrongCode(secret))).statusCode).toBe(401);
    expect((await sendCode(third, codeAt(secret))).statusCode).toBe(303);
  });

  it('signs in with a recovery code once, however it is typed, and not twice; new recovery codes replace the old', async () => {
    const { email, userId, accountId, recoveryCodes, secret } = await userWithCodes('Recovery');
    const browser = await passwordStep(email);
    const page = await browser.get(SIGN_IN_RECOVERY_URL);
    expect(page.statusCode).toBe(200);
    expect(visible(page.body)).toContain('Enter a recovery code');
    const typed = ` ${recoveryCodes[0]!.toUpperCase().replaceAll('-', ' ')} `;
    const accepted = await sendRecoveryCode(browser, typed);
    expect(accepted.statusCode, visible(accepted.body).slice(0, 300)).toBe(303);
    expect(await signedIn(browser)).toBe(true);
    expect(await auditOf(accountId, 'mfa.recovery_code_used')).toEqual([
      { actor: `user:${userId}`, target_id: userId, detail: JSON.stringify({ email, remaining: 9 }) },
    ]);
    expect(visible((await browser.get(SECURITY)).body)).toContain('9 of 10 recovery codes left.');

    const again = await sendRecoveryCode(await passwordStep(email), recoveryCodes[0]!);
    expect(again.statusCode).toBe(401);
    expect(visible(again.body)).toContain('That is not one of your unused recovery codes.');

    // "New recovery codes" wants a code first; then the old ones stop working.
    const form = await browser.get(RECOVERY_CODES_URL);
    expect(form.statusCode).toBe(200);
    const refused = await browser.post(RECOVERY_CODES_URL, { ...hiddenFieldsOf(form.body, RECOVERY_CODES_URL), code: wrongCode(secret) });
    expect(refused.statusCode).toBe(401);
    const made = await browser.post(RECOVERY_CODES_URL, { ...hiddenFieldsOf(form.body, RECOVERY_CODES_URL), code: codeAt(secret) });
    expect(made.statusCode).toBe(200);
    const fresh = recoveryCodesOn(made.body);
    expect(fresh).toHaveLength(10);
    expect(fresh.filter((code) => recoveryCodes.includes(code))).toEqual([]);
    expect(await auditOf(accountId, 'mfa.recovery_codes_regenerated')).toHaveLength(1);
    expect((await sendRecoveryCode(await passwordStep(email), recoveryCodes[1]!)).statusCode).toBe(401);
    expect((await sendRecoveryCode(await passwordStep(email), fresh[1]!)).statusCode).toBe(303);
  });

  it('turns off with a current code; sign-in then asks only for the password', async () => {
    const { email, userId, accountId, secret } = await userWithCodes('TurnOff');
    const browser = await passwordStep(email);
    expect((await sendCode(browser, codeAt(secret))).statusCode).toBe(303);
    const security = await browser.get(SECURITY);
    expect(security.body).toContain(`<form method="get" action="${TURN_OFF_URL}"><button type="submit" class="danger">Turn off</button></form>`);
    const page = await browser.get(TURN_OFF_URL);
    expect(page.statusCode).toBe(200);
    // The code just used does not turn them off; a wrong one neither.
    for (const code of [codeAt(secret), wrongCode(secret)]) {
      const refused = await browser.post(TURN_OFF_URL, { ...hiddenFieldsOf(page.body, TURN_OFF_URL), code });
      expect(refused.statusCode).toBe(401);
    }
    expect(await t.ctx.store.db.selectFrom('user_totp').select('user_id').where('user_id', '=', userId).execute()).toHaveLength(1);
    nextStep();
    const off = await browser.post(TURN_OFF_URL, { ...hiddenFieldsOf(page.body, TURN_OFF_URL), code: codeAt(secret) });
    expect(off.statusCode).toBe(303);
    expect(off.headers.location).toBe(`${SECURITY}?notice=mfa-off`);
    expect(visible((await browser.get(off.headers.location as string)).body)).toContain('One-time codes are off');
    expect(await t.ctx.store.db.selectFrom('user_totp').select('user_id').where('user_id', '=', userId).execute()).toEqual([]);
    expect(await t.ctx.store.db.selectFrom('user_recovery_codes').select('id').where('user_id', '=', userId).execute()).toEqual([]);
    expect(await auditOf(accountId, 'mfa.disabled')).toEqual([{ actor: `user:${userId}`, target_id: userId, detail: JSON.stringify({ email }) }]);

    const client = new DashboardClient(t.app);
    const direct = await client.submit('/dashboard/sign-in', '/dashboard/sign-in', { email, password: PASSWORD });
    expect(direct.statusCode).toBe(303);
    expect(direct.headers.location).toBe(HOME);
    expect(await signedIn(client)).toBe(true);
  });

  it('accepts one code once when two nodes are sent it at the same time', async () => {
    const { email, secret } = await userWithCodes('TwoNodes');
    const other = await startSecondNode(t);
    try {
      const here = await passwordStep(email);
      const there = await passwordStep(email, other.app);
      const code = codeAt(secret);
      const [a, b] = await Promise.all([
        here.post(SIGN_IN_CODE_URL, { ...hiddenFieldsOf((await here.get(SIGN_IN_CODE_URL)).body, SIGN_IN_CODE_URL), code }),
        there.post(SIGN_IN_CODE_URL, { ...hiddenFieldsOf((await there.get(SIGN_IN_CODE_URL)).body, SIGN_IN_CODE_URL), code }),
      ]);
      expect([a.statusCode, b.statusCode].sort()).toEqual([303, 401]);
      expect(visible((a.statusCode === 401 ? a : b).body)).toContain(REUSED_CODE);
    } finally {
      await other.close();
    }
  });

  it('makes a password user of an account that requires codes turn them on before any session', async () => {
    const owner = await newSignedInUser(t.app, t.ctx.store.db, 'Policy');
    const team = await owner.client.get('/dashboard/team');
    expect(visible(team.body)).toContain('One-time codes (MFA) Not required.');
    expect(team.body).toContain('<input type="hidden" name="required" value="on">');
    const set = await owner.client.submit('/dashboard/team', MFA_POLICY_URL, {});
    expect(set.statusCode).toBe(303);
    expect(set.headers.location).toBe('/dashboard/team');
    expect((await auditOf(owner.accountId, 'account.mfa_required_changed')).map((row) => JSON.parse(row.detail))).toEqual([{ required: true }]);
    // The same value again changes nothing.
    await owner.client.post(MFA_POLICY_URL, { csrf: hiddenFieldsOf(team.body, MFA_POLICY_URL).csrf!, required: 'on' });
    expect(await auditOf(owner.accountId, 'account.mfa_required_changed')).toHaveLength(1);
    // The owner's session, already open, stays; Team says the codes are required, and offers to stop.
    const required = await owner.client.get('/dashboard/team');
    expect(required.statusCode).toBe(200);
    expect(visible(required.body)).toContain('Required Everyone who signs in with a password gives a code from an authenticator app');
    expect(required.body).toContain('>Stop requiring MFA</button>');

    const email = `developer-${randomBytes(4).toString('hex')}@policy.example`;
    const userId = newId('usr');
    await t.ctx.store.accounts.addUser({
      id: userId,
      account_id: owner.accountId,
      email,
      password_hash: await hashPassword(PASSWORD),
      created_at: t.clock.now().toISOString(),
      role: 'developer',
      last_sign_in_at: null,
    });
    const browser = await passwordStep(email);
    const page = await browser.get(SIGN_IN_CODE_URL);
    expect(page.statusCode).toBe(200);
    expect(visible(page.body)).toContain('Your account requires a code from an authenticator app at every sign-in.');
    expect(page.body).toContain('<svg xmlns="http://www.w3.org/2000/svg"');
    const secret = secretOn(page.body);
    // Reloading the page shows the same secret.
    expect(secretOn((await browser.get(SIGN_IN_CODE_URL)).body)).toBe(secret);
    expect(await signedIn(browser)).toBe(false);
    expect((await browser.get(SIGN_IN_RECOVERY_URL)).headers.location).toBe(SIGN_IN_CODE_URL);

    const wrong = await sendCode(browser, wrongCode(secret));
    expect(wrong.statusCode).toBe(422);
    expect(await sessionsOf(userId)).toBe(0);
    const confirmed = await sendCode(browser, codeAt(secret));
    expect(confirmed.statusCode).toBe(200);
    expect(hasSessionCookie(confirmed)).toBe(true);
    expect(recoveryCodesOn(confirmed.body)).toHaveLength(10);
    expect(await signedIn(browser)).toBe(true);
    expect(await auditOf(owner.accountId, 'mfa.enabled')).toHaveLength(1);
    // `user list` says whose codes are on.
    const env = cliEnv({ KEYWARD_DATABASE_URL: t.database.url, KEYWARD_MASTER_KEY: t.masterKey.toString('base64') });
    const listed = (await cliJson(env, ['user', 'list', '--account', owner.accountId])).users as { id: string; mfa: boolean }[];
    expect(Object.fromEntries(listed.map((u) => [u.id, u.mfa]))).toEqual({ [owner.userId]: false, [userId]: true });

    // The developer sees the policy on Team, but no form to change it.
    const asDeveloper = await browser.get('/dashboard/team');
    expect(visible(asDeveloper.body)).toContain('Your role (developer) can see this policy but not change it.');
    expect(asDeveloper.body).not.toContain(`action="${MFA_POLICY_URL}"`);

    // From now on the developer gives a code like anyone whose codes are on.
    nextStep();
    const next = await passwordStep(email);
    expect(visible((await next.get(SIGN_IN_CODE_URL)).body)).toContain(ASKS_FOR_CODE);
    expect((await sendCode(next, codeAt(secret))).statusCode).toBe(303);

    // Not required any more: a user without codes signs in with the password alone.
    expect((await owner.client.submit('/dashboard/team', MFA_POLICY_URL, {})).statusCode).toBe(303);
    expect((await auditOf(owner.accountId, 'account.mfa_required_changed')).map((row) => JSON.parse(row.detail))).toEqual([
      { required: true },
      { required: false },
    ]);
    const third = `viewer-${randomBytes(4).toString('hex')}@policy.example`;
    await t.ctx.store.accounts.addUser({
      id: newId('usr'),
      account_id: owner.accountId,
      email: third,
      password_hash: await hashPassword(PASSWORD),
      created_at: t.clock.now().toISOString(),
      role: 'viewer',
      last_sign_in_at: null,
    });
    const plain = await new DashboardClient(t.app).submit('/dashboard/sign-in', '/dashboard/sign-in', { email: third, password: PASSWORD });
    expect(plain.headers.location).toBe(HOME);
  });

  it('makes a person joining an account that requires codes turn them on before the session the join would start', async () => {
    const owner = await newSignedInUser(t.app, t.ctx.store.db, 'Joiners');
    expect((await owner.client.submit('/dashboard/team', MFA_POLICY_URL, {})).statusCode).toBe(303);
    const email = `joiner-${randomBytes(4).toString('hex')}@policy.example`;
    const { url } = await inviteOnPage(owner.client, email, 'developer');
    const joined = await joinWithLink(t.app, url!);
    // Joined (the user exists, the link is used), yet no session: the enrolment comes first.
    expect(joined.response.statusCode).toBe(303);
    expect(joined.response.headers.location).toBe(SIGN_IN_CODE_URL);
    expect(hasSessionCookie(joined.response)).toBe(false);
    expect(await signedIn(joined.client)).toBe(false);
    const userId = (await t.ctx.store.db.selectFrom('account_users').select('id').where('email', '=', email).executeTakeFirstOrThrow()).id;
    expect(await sessionsOf(userId)).toBe(0);
    const secret = secretOn((await joined.client.get(SIGN_IN_CODE_URL)).body);
    const confirmed = await sendCode(joined.client, codeAt(secret));
    expect(hasSessionCookie(confirmed)).toBe(true);
    expect(await signedIn(joined.client)).toBe(true);
  });

  it('stores the secret only sealed, never logs or records a code, and a master-key rotation reseals it', async () => {
    const { email, userId, accountId, secret, recoveryCodes } = await userWithCodes('Sealed');
    const used = [codeAt(secret)];
    expect((await sendCode(await passwordStep(email), used[0]!)).statusCode).toBe(303);
    nextStep();
    used.push(wrongCode(secret));
    await sendCode(await passwordStep(email), used[1]!);
    expect((await sendRecoveryCode(await passwordStep(email), recoveryCodes[2]!)).statusCode).toBe(303);

    const rawBytes = Buffer.from(Secret.fromBase32(secret).bytes);
    const secrets = [secret, secret.toLowerCase(), ...recoveryCodes, ...recoveryCodes.map((c) => c.replaceAll('-', ''))];
    const rows = await storedRowsText(t.ctx);
    expect(leaked(rows, [...secrets, rawBytes.toString('hex'), rawBytes.toString('base64')])).toEqual([]);
    if (t.database.file) {
      for (const file of sqliteFilesText(t.database.file)) expect(leaked(file, [...secrets, rawBytes.toString('latin1')])).toEqual([]);
    }
    expect(leaked(t.logs.join('\n'), [...secrets, ...used])).toEqual([]);
    const details = (await t.ctx.store.db.selectFrom('audit_events').select('detail').where('account_id', '=', accountId).execute()).map((r) => r.detail);
    expect(details.length).toBeGreaterThan(3);
    expect(leaked(details.join('\n'), [...secrets, ...used])).toEqual([]);

    // A rotation to a new key reseals it; a node on the new key alone opens it and accepts the next code.
    const newKey = randomBytes(32);
    const rotating = await startSecondNode(t, { masterKey: newKey, oldMasterKeys: [t.masterKey] });
    let alone: Awaited<ReturnType<typeof startSecondNode>> | undefined;
    try {
      expect(await rotateMasterKey(rotating.ctx)).toMatchObject({ remaining: 0 });
      const sealed = await t.ctx.store.db.selectFrom('user_totp').select('secret').where('user_id', '=', userId).executeTakeFirstOrThrow();
      expect(Buffer.from(sealed.secret).subarray(0, 9).toString('hex')).toBe(`02${keyIdOf(newKey.toString('base64'))}`);
      alone = await startSecondNode(t, { masterKey: newKey });
      alone.clock.advance(60);
      const browser = await passwordStep(email, alone.app);
      const code = authenticator(secret).generate({ timestamp: alone.clock.now().getTime() });
      expect((await sendCode(browser, code)).statusCode).toBe(303);
    } finally {
      await alone?.close();
      await rotating.close();
    }
  });
});
