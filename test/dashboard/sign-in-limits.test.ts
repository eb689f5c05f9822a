/**
 * Sign-in and sign-up under load and under probing (issue 8, item 3): at most five passwords are
 * checked per lock window however many arrive at once (on one node or two), the client address is
 * counted before scrypt runs, sign-up is limited per address, and no answer tells whether an email
 * has an account.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rotateMasterKey } from '../../src/services/sealing/master-key-rotation.js';
import { createAccount } from '../../src/services/users/accounts.js';
import { MAX_SIGN_IN_ATTEMPTS } from '../../src/services/users/sign-in-attempts.js';
import { csrfOf, DashboardClient, visible } from '../helpers/dashboard-session.js';
import { ENGINES } from '../helpers/databases.js';
import { type SecondNode, startSecondNode, startTestApp, type TestApp } from '../helpers/test-app.js';

const PASSWORD = 'correct horse battery staple';
const WRONG = 'That email and password do not match an account.';
const LOCKED = 'Too many failed sign-ins for this email.';
const FROM_ADDRESS = 'Too many attempts from this address.';

/** A browser on the sign-in page, ready to post the form many times at once. */
async function signInForm(app: FastifyInstance) {
  const client = new DashboardClient(app);
  const csrf = csrfOf((await client.get('/dashboard/sign-in')).body);
  return (email: string, password: string, on: FastifyInstance = app) =>
    on.inject({
      method: 'POST',
      url: '/dashboard/sign-in',
      headers: { cookie: client.cookieHeader, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ csrf, email, password }).toString(),
    });
}

/** How many answers say what: a checked wrong password, a lock (not checked), a session. */
function tally(responses: LightMyRequestResponse[]) {
  const text = responses.map((r) => visible(r.body));
  return {
    wrong: responses.filter((r, i) => r.statusCode === 401 && text[i]!.includes(WRONG)).length,
    locked: responses.filter((r, i) => r.statusCode === 429 && text[i]!.includes(LOCKED)).length,
    signedIn: responses.filter((r) => r.statusCode === 303).length,
  };
}

/** The page with what differs between two browsers or two emails taken out. */
function normalised(response: LightMyRequestResponse, email: string) {
  return { status: response.statusCode, body: response.body.replace(/name="csrf" value="[^"]+"/, 'name="csrf" value=""').replaceAll(email, 'EMAIL') };
}

describe.each(ENGINES)('sign-in limits on %s', (engine) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(engine);
  });
  afterAll(() => t.close());

  const addUser = async (email: string) => createAccount(t.ctx, { name: 'Race', email, password: PASSWORD });

  it('checks exactly five of twenty wrong passwords sent at once; the others are refused unchecked', async () => {
    await addUser('race20@acme.example');
    const post = await signInForm(t.app);
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => post('race20@acme.example', `guess ${i}`)));
    expect(tally(answers)).toEqual({ wrong: MAX_SIGN_IN_ATTEMPTS, locked: 20 - MAX_SIGN_IN_ATTEMPTS, signedIn: 0 });
  });

  it('does not check the right password sent last after nineteen wrong ones at once', async () => {
    await addUser('race19@acme.example');
    const post = await signInForm(t.app);
    const answers = await Promise.all([
      ...Array.from({ length: 19 }, (_, i) => post('race19@acme.example', `guess ${i}`)),
      post('race19@acme.example', PASSWORD),
    ]);
    const counted = tally(answers);
    expect(counted.wrong + counted.signedIn).toBeLessThanOrEqual(MAX_SIGN_IN_ATTEMPTS);
    expect(counted.locked).toBeGreaterThanOrEqual(20 - MAX_SIGN_IN_ATTEMPTS);
    // The attempts were handed out in the order they arrived: the right password came too late.
    expect(answers[19]!.statusCode).toBe(429);
    expect(answers[19]!.headers['set-cookie'] ?? '').not.toContain('keyward_session=');
  });

  it('answers a known and an unknown email alike, byte for byte, through the lock-out', async () => {
    await addUser('known@acme.example');
    const post = await signInForm(t.app);
    const run = async (email: string) => {
      const answers = [];
      for (let i = 0; i <= MAX_SIGN_IN_ATTEMPTS; i += 1) answers.push(normalised(await post(email, `guess ${i}`), email));
      return answers;
    };
    const known = await run('known@acme.example');
    const unknown = await run('unknown@acme.example');
    expect(known.map((a) => a.status)).toEqual([401, 401, 401, 401, 401, 429]);
    expect(unknown).toEqual(known);
    expect(visible(known[MAX_SIGN_IN_ATTEMPTS]!.body)).toContain(LOCKED);
  });

  it('answers the same before and after the email has an account', async () => {
    const post = await signInForm(t.app);
    const before = await post('later@acme.example', 'a guess');
    await addUser('later@acme.example');
    const after = await post('later@acme.example', 'a guess');
    expect(after.statusCode).toBe(401);
    expect(after.body).toBe(before.body);
  });

  it('answers a sign-up the same whether the email is free or taken, and changes nothing of the taken one', async () => {
    const client = new DashboardClient(t.app);
    const csrf = csrfOf((await client.get('/dashboard/sign-up')).body);
    const signUp = (password: string) => client.post('/dashboard/sign-up', { csrf, accountName: 'Probe', email: 'probe@acme.example', password });
    const free = await signUp(PASSWORD);
    const taken = await signUp('another password');
    for (const response of [free, taken]) {
      expect(response.statusCode).toBe(303);
      expect(response.headers.location).toBe('/dashboard/sign-in?notice=signed-up');
      expect(response.headers['set-cookie']).toBeUndefined();
    }
    expect(taken.body).toBe(free.body);
    const post = await signInForm(t.app);
    expect((await post('probe@acme.example', 'another password')).statusCode).toBe(401);
    expect((await post('probe@acme.example', PASSWORD)).statusCode).toBe(303);
  });
});

// Several nodes share one database only on PostgreSQL.
describe('sign-in limits across two nodes on postgres', () => {
  it('holds the five when the twenty wrong passwords are spread over two nodes', async () => {
    const t = await startTestApp('postgres');
    const second = await startSecondNode(t);
    try {
      await createAccount(t.ctx, { name: 'Race', email: 'two-nodes@acme.example', password: PASSWORD });
      const post = await signInForm(t.app);
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => post('two-nodes@acme.example', `guess ${i}`, i % 2 ? second.app : t.app)));
      expect(tally(answers)).toEqual({ wrong: MAX_SIGN_IN_ATTEMPTS, locked: 20 - MAX_SIGN_IN_ATTEMPTS, signedIn: 0 });
    } finally {
      await second.close();
      await t.close();
    }
  });
});

describe.each(ENGINES)('per-address limits on %s', (engine) => {
  let t: TestApp;
  const LIMIT = 3;
  beforeAll(async () => {
    t = await startTestApp(engine, { authFailureLimitPerMinute: LIMIT });
  });
  afterAll(() => t.close());

  it('counts the address before scrypt: of ten sign-ins at once, only the limit are checked', async () => {
    const post = await signInForm(t.app);
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => post(`nobody-${i}@acme.example`, 'a guess')));
    expect(answers.filter((r) => r.statusCode === 401)).toHaveLength(LIMIT);
    const refused = answers.filter((r) => r.statusCode === 429);
    expect(refused).toHaveLength(10 - LIMIT);
    for (const response of refused) expect(visible(response.body)).toContain(FROM_ADDRESS);
  });

  it('limits sign-ups per address, making no account past the limit, and lets the address in again a minute later', async () => {
    t.clock.advance(61);
    const client = new DashboardClient(t.app);
    const csrf = csrfOf((await client.get('/dashboard/sign-up')).body);
    const signUp = (i: number) => client.post('/dashboard/sign-up', { csrf, accountName: `Burst ${i}`, email: `burst-${i}@acme.example`, password: PASSWORD });
    const answers = await Promise.all(Array.from({ length: 5 }, (_, i) => signUp(i)));
    expect(answers.filter((r) => r.statusCode === 303)).toHaveLength(LIMIT);
    const refused = answers.filter((r) => r.statusCode === 429);
    expect(refused).toHaveLength(5 - LIMIT);
    for (const response of refused) expect(visible(response.body)).toContain(FROM_ADDRESS);
    const made = await t.ctx.store.db.selectFrom('account_users').select('email').where('email', 'like', 'burst-%').execute();
    expect(made).toHaveLength(LIMIT);
    t.clock.advance(61);
    expect((await signUp(99)).statusCode).toBe(303);
  });
});

// During a master-key rotation nodes run on different keys (issue 17, item 3). Two nodes on one
// database: a SQLite file shared by two apps in this process is enough for a count in one row.
describe.each(ENGINES)('sign-in limits across a master-key rotation on %s', (engine) => {
  it('counts an email in one row on nodes on the old and the new key, and still once the rotation is done', async () => {
    const t = await startTestApp(engine);
    const newKey = randomBytes(32);
    const second = await startSecondNode(t, { masterKey: newKey, oldMasterKeys: [t.masterKey] });
    let third: SecondNode | undefined;
    try {
      await createAccount(t.ctx, { name: 'Rotating', email: 'rotating@acme.example', password: PASSWORD });
      const onOldKey = await signInForm(t.app);
      const onNewKey = await signInForm(second.app);
      const wrong = [];
      for (let i = 0; i < MAX_SIGN_IN_ATTEMPTS; i += 1) wrong.push(await onOldKey('rotating@acme.example', `guess ${i}`));
      expect(tally(wrong)).toEqual({ wrong: MAX_SIGN_IN_ATTEMPTS, locked: 0, signedIn: 0 });
      // The right password on the other node: the email is locked there too, and stays locked on both.
      const right = await onNewKey('rotating@acme.example', PASSWORD);
      expect(tally([right])).toEqual({ wrong: 0, locked: 1, signedIn: 0 });
      expect(tally([await onOldKey('rotating@acme.example', PASSWORD)])).toEqual({ wrong: 0, locked: 1, signedIn: 0 });
      // Both nodes counted in the same single row.
      expect(await t.ctx.store.db.selectFrom('sign_in_attempts').select('attempts').execute()).toEqual([{ attempts: MAX_SIGN_IN_ATTEMPTS }]);
      // The rotation finishes (the count's secret is resealed with the rest): a node on the new key
      // alone still finds the email locked.
      expect(await rotateMasterKey(second.ctx)).toMatchObject({ remaining: 0 });
      third = await startSecondNode(t, { masterKey: newKey });
      expect(tally([await (await signInForm(third.app))('rotating@acme.example', PASSWORD)])).toEqual({ wrong: 0, locked: 1, signedIn: 0 });
    } finally {
      await third?.close();
      await second.close();
      await t.close();
    }
  });
});
