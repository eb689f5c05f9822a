/**
 * How long a dashboard session lives (CONTRACT 9), on the test clock: 12 hours idle, the idle
 * deadline moving with each request (written at most once a minute, never past the absolute end),
 * and 7 days in all whatever its use.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addSeconds, iso } from '../../src/primitives/clock.js';
import { type DashboardClient, newSignedInUser } from '../helpers/dashboard-session.js';
import { ENGINES } from '../helpers/databases.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

const HOUR = 3600;
const IDLE = 12 * HOUR;
const LIFETIME = 7 * 24 * HOUR;

describe.each(ENGINES)('dashboard session lifetimes on %s', (engine) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(engine);
  });
  afterAll(() => t.close());

  const newUser = () => newSignedInUser(t.app, t.ctx.store.db, 'Lifetime');
  /** The user's one session row, as stored. */
  const sessionRow = async (userId: string) =>
    t.ctx.store.db.selectFrom('dashboard_sessions').select(['last_seen_at', 'expires_at', 'ends_at']).where('user_id', '=', userId).executeTakeFirst();
  /** Whether the browser's session opens a signed-in page now. */
  const signedIn = async (client: DashboardClient) => {
    const response = await client.get('/dashboard/servers');
    if (response.statusCode !== 200) {
      expect(response.statusCode).toBe(303);
      expect(response.headers.location).toBe('/dashboard/sign-in');
    }
    return response.statusCode === 200;
  };

  it('keeps a session used every 11 hours alive past 12 hours: each request moves the idle deadline', async () => {
    const { client, userId } = await newUser();
    for (let i = 1; i <= 4; i += 1) {
      t.clock.advance(11 * HOUR);
      expect(await signedIn(client), `after ${11 * i} hours`).toBe(true);
    }
    // 44 hours after sign-in; the deadline is 12 hours after the last request.
    expect((await sessionRow(userId))!.expires_at).toBe(iso(addSeconds(t.clock.now(), IDLE)));
  });

  it('ends a session left 12 hours and a second, and keeps one left a second less', async () => {
    const left = await newUser();
    const kept = await newUser();
    t.clock.advance(IDLE - 1);
    expect(await signedIn(kept.client)).toBe(true);
    t.clock.advance(2);
    expect(await signedIn(left.client)).toBe(false);
    // Refused, not revived: the next request a moment later is refused too.
    t.clock.advance(1);
    expect(await signedIn(left.client)).toBe(false);
    expect(await signedIn(kept.client)).toBe(true);
  });

  it('ends a session 7 days after sign-in however often it is used', async () => {
    const { client, userId } = await newUser();
    const { ends_at: endsAt } = (await sessionRow(userId))!;
    expect(endsAt).toBe(iso(addSeconds(t.clock.now(), LIFETIME)));
    for (let hours = 1; hours < LIFETIME / HOUR; hours += 1) {
      t.clock.advance(HOUR);
      expect(await signedIn(client), `after ${hours} hours`).toBe(true);
    }
    // The idle deadline stopped at the absolute end rather than 12 hours past the last request.
    expect((await sessionRow(userId))!.expires_at).toBe(endsAt);
    t.clock.advance(HOUR);
    expect(await signedIn(client)).toBe(false);
  });

  it('writes the last request at most once a minute: two requests within a minute write once', async () => {
    const { client, userId } = await newUser();
    const signedInAt = t.clock.now();
    const atSignIn = await sessionRow(userId);
    expect(atSignIn).toMatchObject({ last_seen_at: iso(signedInAt), expires_at: iso(addSeconds(signedInAt, IDLE)) });

    // Within the first minute: read, not written.
    t.clock.advance(59);
    expect(await signedIn(client)).toBe(true);
    expect(await sessionRow(userId)).toEqual(atSignIn);

    // A minute on: this request is written; the next, 30 seconds later, is not.
    t.clock.advance(1);
    const firstOfMinute = t.clock.now();
    expect(await signedIn(client)).toBe(true);
    const written = await sessionRow(userId);
    expect(written).toMatchObject({ last_seen_at: iso(firstOfMinute), expires_at: iso(addSeconds(firstOfMinute, IDLE)) });
    t.clock.advance(30);
    expect(await signedIn(client)).toBe(true);
    expect(await sessionRow(userId)).toEqual(written);

    // The Security page shows the last request written.
    const page = await client.get('/dashboard/security');
    expect(page.body).toContain(`<time datetime="${iso(firstOfMinute)}">`);
  });
});
