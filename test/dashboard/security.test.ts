/**
 * The "Security" page (CONTRACT 9) over app.inject: two browsers signed in as one user, each with its
 * own User-Agent and address, see both sessions named by device, "This device" on their own; "Sign
 * out" ends the other one only, "Sign out everywhere" ends both and lands on the sign-in page; a
 * session id of another user, of this account or another, is the 404 page and ends nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { END_ALL_URL, endSessionUrl } from '../../src/dashboard/security-views.js';
import { newId } from '../../src/primitives/ids.js';
import { createAccount } from '../../src/services/users/accounts.js';
import { hashPassword } from '../../src/services/users/passwords.js';
import { browserOn } from '../helpers/dashboard-device.js';
import { auditEventsOf, csrfOf, DashboardClient, newSignedInUser, visible } from '../helpers/dashboard-session.js';
import { ENGINES } from '../helpers/databases.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

const SECURITY = '/dashboard/security';
const PASSWORD = 'correct horse battery staple';
const CHROME_ON_MAC = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';
const FIREFOX_ON_WINDOWS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:125.0) Gecko/20100101 Firefox/125.0';

/** The rows of the sessions table, each as its visible text. */
function rows(body: string): string[] {
  const tbody = /<tbody>([\s\S]*)<\/tbody>/.exec(body)?.[1] ?? '';
  return [...tbody.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((m) => visible(m[1]!, ' ').replace(/\s+/g, ' ').trim());
}

describe.each(ENGINES)('the Security page on %s', (engine) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(engine);
  });
  afterAll(() => t.close());

  let made = 0;
  /** A new account whose user signs in from a Mac (Chrome) and from a Windows PC (Firefox). */
  async function userOnTwoBrowsers() {
    made += 1;
    const email = `two-browsers-${made}@security.example`;
    const { userId, accountId } = await createAccount(t.ctx, { name: `Two browsers ${made}`, email, password: PASSWORD });
    const mac = browserOn(t.app, { userAgent: CHROME_ON_MAC, address: '203.0.113.7' });
    const windows = browserOn(t.app, { userAgent: FIREFOX_ON_WINDOWS, address: '198.51.100.23' });
    for (const client of [mac, windows]) {
      expect((await client.submit('/dashboard/sign-in', '/dashboard/sign-in', { email, password: PASSWORD })).statusCode).toBe(303);
    }
    const sessionOf = async (userAgent: string) =>
      (
        await t.ctx.store.db
          .selectFrom('dashboard_sessions')
          .select('id')
          .where('user_id', '=', userId)
          .where('user_agent', '=', userAgent)
          .executeTakeFirstOrThrow()
      ).id;
    return { email, userId, accountId, mac, windows, macSession: await sessionOf(CHROME_ON_MAC), windowsSession: await sessionOf(FIREFOX_ON_WINDOWS) };
  }

  const sessionIdsOf = async (userId: string) =>
    (await t.ctx.store.db.selectFrom('dashboard_sessions').select('id').where('user_id', '=', userId).orderBy('id').execute()).map((r) => r.id);
  const auditOf = (accountId: string, action: string) => auditEventsOf(t.ctx.store.db, accountId, action);
  /** Whether the browser's session still opens a signed-in page. */
  const signedIn = async (client: DashboardClient) => {
    const response = await client.get('/dashboard/servers');
    if (response.statusCode === 303) expect(response.headers.location).toBe('/dashboard/sign-in');
    return response.statusCode === 200;
  };

  it("is reached from the user's email at the top right of every page", async () => {
    const { client, email } = await newSignedInUser(t.app, t.ctx.store.db, 'Security');
    const servers = await client.get('/dashboard/servers');
    expect(servers.body).toContain(`<a href="/dashboard/security" title="Security"><span>${email}</span></a>`);
    const page = await client.get(SECURITY);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<h1>Security</h1>');
    expect(page.body).toContain(`<a href="/dashboard/security" title="Security" aria-current="page"><span>${email}</span></a>`);
    // No main section is the current one.
    expect(page.body).not.toMatch(/<nav class="main-nav"[^>]*>.*aria-current/);
  });

  it('lists both sessions of a user signed in on two browsers, by device and address, with "This device" on the one asking', async () => {
    const { mac, windows, macSession, windowsSession } = await userOnTwoBrowsers();
    const page = await mac.get(SECURITY);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<th scope="col">Device</th><th scope="col">Address</th><th scope="col">Signed in</th><th scope="col">Last seen</th>');
    const time = '\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2} UTC';
    expect(rows(page.body).sort()).toEqual([
      expect.stringMatching(new RegExp(`^Chrome on macOS This device 203\\.0\\.113\\.7 ${time} ${time}$`)),
      expect.stringMatching(new RegExp(`^Firefox on Windows 198\\.51\\.100\\.23 ${time} ${time} Sign out$`)),
    ]);
    // "Sign out" only for the other browser's session; this one signs out at the top right or with everyone.
    expect(page.body).toContain(`action="${endSessionUrl(windowsSession)}"`);
    expect(page.body).not.toContain(`action="${endSessionUrl(macSession)}"`);
    expect(page.body).toContain(`<form method="post" action="${END_ALL_URL}">`);
    expect(visible(page.body)).toContain('Sign out everywhere');

    const theirs = rows((await windows.get(SECURITY)).body).sort();
    expect(theirs[0]).toMatch(/^Chrome on macOS 203\.0\.113\.7 .* Sign out$/);
    expect(theirs[1]).toMatch(/^Firefox on Windows This device 198\.51\.100\.23 /);
  });

  it('signs the other browser out with "Sign out", and keeps this one', async () => {
    const { userId, accountId, mac, windows, macSession, windowsSession } = await userOnTwoBrowsers();
    const ended = await mac.submit(SECURITY, endSessionUrl(windowsSession), {});
    expect(ended.statusCode).toBe(303);
    expect(ended.headers.location).toBe(`${SECURITY}?notice=session-ended`);
    expect(ended.headers['set-cookie']).toBeUndefined();
    expect(await sessionIdsOf(userId)).toEqual([macSession]);
    expect(await signedIn(windows)).toBe(false);
    expect(await signedIn(mac)).toBe(true);
    const page = await mac.get(ended.headers.location as string);
    expect(visible(page.body)).toContain('The session was signed out. That browser has to sign in again.');
    expect(rows(page.body)).toEqual([expect.stringMatching(/^Chrome on macOS This device /)]);

    const [event] = await auditOf(accountId, 'session.ended');
    expect(event).toEqual({
      actor: `user:${userId}`,
      target_id: windowsSession,
      detail: JSON.stringify({ device: 'Firefox on Windows', address: '198.51.100.23' }),
    });
    // A session that ended already is not found again.
    const again = await mac.submit(SECURITY, endSessionUrl(windowsSession), {});
    expect(again.statusCode).toBe(404);
    expect(await auditOf(accountId, 'session.ended')).toHaveLength(1);
  });

  it('signs out everywhere: every session of the user ends, this one too, and the browser lands on the sign-in page', async () => {
    const { userId, accountId, mac, windows } = await userOnTwoBrowsers();
    const macCookie = mac.cookieHeader;
    const response = await mac.submit(SECURITY, END_ALL_URL, {});
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe('/dashboard/sign-in?notice=signed-out-everywhere');
    expect(String(response.headers['set-cookie'])).toMatch(/keyward_session=;.*Max-Age=0/);
    expect(await sessionIdsOf(userId)).toEqual([]);
    expect(await signedIn(windows)).toBe(false);
    // The cookie the browser had opens nothing now, whether or not it dropped it.
    const withOldCookie = await t.app.inject({ method: 'GET', url: '/dashboard/servers', headers: { cookie: macCookie } });
    expect(withOldCookie.statusCode).toBe(303);
    expect(withOldCookie.headers.location).toBe('/dashboard/sign-in');
    const signInPage = await mac.get(response.headers.location as string);
    expect(visible(signInPage.body)).toContain('You were signed out on every device. Sign in again to continue.');
    expect(await auditOf(accountId, 'sessions.ended_everywhere')).toEqual([
      { actor: `user:${userId}`, target_id: userId, detail: JSON.stringify({ sessions: 2 }) },
    ]);
  });

  it('signs this browser out when it ends its own session by id', async () => {
    const { userId, mac, windows, macSession, windowsSession } = await userOnTwoBrowsers();
    // No page offers this (the row of this device has no "Sign out"), but the POST is the user's own to make.
    const response = await mac.post(endSessionUrl(macSession), { csrf: csrfOf((await mac.get(SECURITY)).body) });
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe('/dashboard/sign-in');
    expect(await sessionIdsOf(userId)).toEqual([windowsSession]);
    expect(await signedIn(mac)).toBe(false);
    expect(await signedIn(windows)).toBe(true);
  });

  it("answers 404 to another user's session id, of this account or another, and ends nothing", async () => {
    const { accountId, mac, windows, macSession, windowsSession, userId } = await userOnTwoBrowsers();
    // A teammate in the same account, as a viewer: every role looks after its own sessions.
    const teammateId = newId('usr');
    const teammateEmail = `${teammateId}@security.example`;
    await t.ctx.store.accounts.addUser({
      id: teammateId,
      account_id: accountId,
      email: teammateEmail,
      password_hash: await hashPassword(PASSWORD),
      created_at: new Date().toISOString(),
      role: 'viewer',
      last_sign_in_at: null,
    });
    const teammate = new DashboardClient(t.app);
    expect((await teammate.submit('/dashboard/sign-in', '/dashboard/sign-in', { email: teammateEmail, password: PASSWORD })).statusCode).toBe(303);
    const stranger = await newSignedInUser(t.app, t.ctx.store.db, 'Stranger');
    const [teammateSession] = await sessionIdsOf(teammateId);
    const [strangerSession] = await sessionIdsOf(stranger.userId);

    for (const sessionId of [teammateSession!, strangerSession!, 'ses_unknown', `${macSession}x`]) {
      const response = await mac.submit(SECURITY, endSessionUrl(sessionId), {});
      expect(response.statusCode, sessionId).toBe(404);
      expect(visible(response.body)).toContain('Page not found');
    }
    // And the other way round: the teammate (a viewer) cannot end the user's session either.
    expect((await teammate.submit(SECURITY, endSessionUrl(windowsSession), {})).statusCode).toBe(404);

    expect(await signedIn(teammate)).toBe(true);
    expect(await signedIn(stranger.client)).toBe(true);
    expect(await signedIn(mac)).toBe(true);
    expect(await signedIn(windows)).toBe(true);
    expect(await sessionIdsOf(userId)).toEqual([macSession, windowsSession].sort());
    expect(await auditOf(accountId, 'session.ended')).toEqual([]);
    expect(await auditOf(stranger.accountId, 'session.ended')).toEqual([]);
    // The teammate's own page lists only their own session.
    expect(rows((await teammate.get(SECURITY)).body)).toEqual([expect.stringMatching(/^Unknown device This device 127\.0\.0\.1 /)]);
  });
});
