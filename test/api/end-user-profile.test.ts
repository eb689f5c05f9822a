/**
 * A member's profile (CONTRACT 10) through the API, on both engines: PATCH /v1/end-users/{id} sets,
 * merges, removes (null) and clears; the read and the list show it; every change is audited (field
 * names and tag keys, never values); every bad input is refused with one clear message and changes
 * nothing; an unknown member is end_user_not_found. The `tag=key:value` filter of the list: one tag,
 * two, with provider and prefix, across cursors with none skipped or repeated, and its bad values.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setEndUserProfile } from '../../src/services/audience/end-user-profile.js';
import { CLI_ACTOR } from '../../src/services/context.js';
import { ENGINES } from '../helpers/databases.js';
import { connectStatic } from '../helpers/hosted-form.js';
import { expectProblem } from '../helpers/problem-assertions.js';
import { createTenant, keys, startTestApp, type Tenant, type TestApp } from '../helpers/test-app.js';

interface Member {
  externalUserId: string;
  createdAt: string;
  updatedAt: string;
  displayName: string | null;
  email: string | null;
  tags: Record<string, string>;
  credentials: Record<string, unknown>[];
}

const OPENAI_KEY = 'sk-proj-profileSecretValue0123456789abcd';
const UNSET = { displayName: null, email: null, tags: {} };
const tenTags = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`k${i}`, `v${i}`]));

describe.each(ENGINES)('end users’ profiles on %s', (engine) => {
  let t: TestApp;
  let tenant: Tenant;
  let other: Tenant;
  let headers: Record<string, string>;

  beforeAll(async () => {
    t = await startTestApp(engine);
    tenant = await createTenant(t.ctx, { providers: ['openai', 'anthropic'] });
    other = await createTenant(t.ctx);
    headers = keys(tenant);
  });
  afterAll(() => t.close());

  const patch = (id: string, payload: unknown, as = headers) =>
    t.app.inject({
      method: 'PATCH',
      url: `/v1/end-users/${encodeURIComponent(id)}`,
      headers: { ...as, 'content-type': 'application/json' },
      payload: JSON.stringify(payload),
    });
  const read = async (id: string, as = headers) => {
    const response = await t.app.inject({ method: 'GET', url: `/v1/end-users/${encodeURIComponent(id)}`, headers: as });
    expect(response.statusCode, response.body).toBe(200);
    return response.json() as Member;
  };
  const listed = async (query: Record<string, string | string[]>, as = headers) => {
    const response = await t.app.inject({ method: 'GET', url: '/v1/end-users', query, headers: as });
    expect(response.statusCode, response.body).toBe(200);
    return response.json() as { data: Member[]; hasMore: boolean; nextCursor: string | null };
  };
  /** A member made through the service, as a connect session makes one. */
  const member = (id: string, change = {}, of = tenant) =>
    setEndUserProfile(t.ctx, { accountId: of.accountId, serverId: of.serverId, externalUserId: id, change, makeIfNew: true, actor: CLI_ACTOR });
  const profileAudits = (id: string) =>
    t.ctx.store.db
      .selectFrom('audit_events')
      .select(['actor', 'target_id', 'detail', 'server_id'])
      .where('action', '=', 'end_user.profile_updated')
      .where('detail', 'like', `%"externalUserId":${JSON.stringify(id)}%`)
      .orderBy('created_at')
      .orderBy('id')
      .execute();

  it('shows an unset profile as nulls and {} in the list and the read', async () => {
    await connectStatic(t.app, headers, { externalUserId: 'plain', values: { apiKey: OPENAI_KEY } });
    expect(await read('plain')).toMatchObject({ externalUserId: 'plain', ...UNSET });
    expect((await listed({ prefix: 'plain' })).data).toEqual([expect.objectContaining({ externalUserId: 'plain', ...UNSET })]);
  });

  it('sets the display name, email and tags, answers the member as the list shows it, and audits the change without values', async () => {
    await connectStatic(t.app, headers, { externalUserId: 'alice', values: { apiKey: OPENAI_KEY } });
    const before = await read('alice');
    t.clock.advance(5);
    const response = await patch('alice', { displayName: 'Alice Example', email: 'alice@example.com', tags: { plan: 'pro', region: 'eu-west' } });
    expect(response.statusCode, response.body).toBe(200);
    const body = response.json() as Member;
    const profile = { displayName: 'Alice Example', email: 'alice@example.com', tags: { plan: 'pro', region: 'eu-west' } };
    expect(Object.keys(body)).toEqual(['externalUserId', 'createdAt', 'updatedAt', 'displayName', 'email', 'tags', 'credentials']);
    expect(body).toMatchObject({ externalUserId: 'alice', createdAt: before.createdAt, updatedAt: t.clock.now().toISOString(), ...profile });
    // The list's credential summary: no secret.
    expect(body.credentials).toEqual([expect.objectContaining({ provider: 'openai', type: 'static', status: 'active' })]);
    expect(response.body).not.toContain(OPENAI_KEY);
    expect(body.credentials[0]).not.toHaveProperty('values');

    expect(await read('alice')).toMatchObject(profile);
    const [inList] = (await listed({ prefix: 'alice' })).data;
    expect(inList).toEqual(body);

    const audits = await profileAudits('alice');
    expect(audits).toHaveLength(1);
    expect(audits[0]).toMatchObject({ actor: `api:${tenant.accountKeyId}`, server_id: tenant.serverId });
    expect(JSON.parse(audits[0]!.detail)).toEqual({ externalUserId: 'alice', fields: ['displayName', 'email', 'tags'], tagKeys: ['plan', 'region'] });
    for (const value of ['Alice Example', 'alice@example.com', 'eu-west']) expect(audits[0]!.detail).not.toContain(value);
  });

  it('merges tags key by key, keeps fields left out, removes a tag set to null, and clears a field set to null', async () => {
    await member('merger', { displayName: 'Merger', email: 'm@example.com', tags: { a: '1', b: '2' } });
    // Each change a second after the last: the audit events are read back in their order by time (ids
    // made in the same millisecond sort at random).
    const patchLater = (id: string, payload: unknown) => {
      t.clock.advance(1);
      return patch(id, payload);
    };
    const merged = await patchLater('merger', { tags: { b: 'two', c: '3' } });
    expect(merged.json()).toMatchObject({ displayName: 'Merger', email: 'm@example.com', tags: { a: '1', b: 'two', c: '3' } });
    const removed = await patchLater('merger', { tags: { a: null, nothing: null } });
    expect(removed.json()).toMatchObject({ tags: { b: 'two', c: '3' } });
    const cleared = await patchLater('merger', { displayName: null });
    expect(cleared.json()).toMatchObject({ displayName: null, email: 'm@example.com', tags: { b: 'two', c: '3' } });
    const all = await patchLater('merger', { email: null, tags: { b: null, c: null } });
    expect(all.json()).toMatchObject(UNSET);
    expect(await read('merger')).toMatchObject(UNSET);
    // Tags come back with their keys in order, and a value may be empty or hold colons.
    const ordered = await patchLater('merger', { tags: { zeta: 'z', alpha: 'a:b:c', 'm.x_y-z': '' } });
    expect(Object.entries(ordered.json().tags)).toEqual([
      ['alpha', 'a:b:c'],
      ['m.x_y-z', ''],
      ['zeta', 'z'],
    ]);
    const details = (await profileAudits('merger')).map((row) => JSON.parse(row.detail));
    expect(details.map((d) => [d.fields, d.tagKeys])).toEqual([
      [
        ['displayName', 'email', 'tags'],
        ['a', 'b'],
      ],
      [['tags'], ['b', 'c']],
      [['tags'], ['a']],
      [['displayName'], undefined],
      [
        ['email', 'tags'],
        ['b', 'c'],
      ],
      [['tags'], ['alpha', 'm.x_y-z', 'zeta']],
    ]);
    expect(details[0].created).toBe(true);
  });

  it('accepts a change that keeps ten tags, removing one while adding another', async () => {
    await member('ten', { tags: tenTags });
    const swapped = await patch('ten', { tags: { k0: null, k10: 'v10' } });
    expect(swapped.statusCode, swapped.body).toBe(200);
    expect(Object.keys(swapped.json().tags)).toHaveLength(10);
    expect(swapped.json().tags).toMatchObject({ k10: 'v10' });
    expect(swapped.json().tags).not.toHaveProperty('k0');
  });

  it('answers an empty change with the member as it is, changing and auditing nothing', async () => {
    await member('still', { displayName: 'Still' });
    const before = await read('still');
    t.clock.advance(3);
    for (const payload of [{}, { displayName: 'Still' }, { tags: { gone: null } }]) {
      const response = await patch('still', payload);
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json()).toMatchObject({ displayName: 'Still', updatedAt: before.updatedAt });
    }
    expect(await profileAudits('still')).toHaveLength(1);
  });

  const tooLong = (n: number) => 'x'.repeat(n);
  it.each<[string, unknown, string, RegExp]>([
    ['eleven new tags', { tags: { ...tenTags, k10: 'v' } }, '/body/tags', /at most 10 tags; with this change they would have 11/],
    ['two more tags on top of nine', { tags: { n1: '1', n2: '2' } }, '/body/tags', /at most 10 tags; with this change they would have 11/],
    ['an upper-case key', { tags: { Plan: 'pro' } }, '/body/tags', /The tag key "Plan" is not allowed: a tag key is 1 to 40 characters of a-z, 0-9/],
    ['a key with a space', { tags: { 'a b': 'x' } }, '/body/tags', /The tag key "a b" is not allowed/],
    ['an empty key', { tags: { '': 'x' } }, '/body/tags', /The tag key "" is not allowed/],
    ['a key of 41 characters', { tags: { [tooLong(41)]: 'x' } }, '/body/tags', /is not allowed: a tag key is 1 to 40 characters/],
    ['a non-ASCII key', { tags: { clé: 'x' } }, '/body/tags', /The tag key "clé" is not allowed/],
    ['a value of 201 characters', { tags: { plan: tooLong(201) } }, '/body/tags', /The value of tag "plan" is 201 characters long; at most 200 are allowed/],
    ['a value with a line break', { tags: { plan: 'a\nb' } }, '/body/tags', /The value of tag "plan" contains a control character/],
    [
      'a value with a lone surrogate',
      { tags: { plan: 'a\ud800' } },
      '/body/tags',
      /The value of tag "plan" is not valid text: it holds a lone UTF-16 surrogate/,
    ],
    ['a number as a value', { tags: { plan: 5 } }, '/body/tags/plan', /must be string,null/],
    ['true as a value', { tags: { plan: true } }, '/body/tags/plan', /must be string,null/],
    ['an object as a value', { tags: { plan: { tier: 'pro' } } }, '/body/tags/plan', /must be string,null/],
    ['tags as an array', { tags: ['plan:pro'] }, '/body/tags', /must be object/],
    ['tags as null', { tags: null }, '/body/tags', /must be object/],
    ['an email without a domain', { email: 'alice' }, '/body/email', /email is not an email address: give one such as name@example.com/],
    ['an email without a dot in its domain', { email: 'alice@localhost' }, '/body/email', /email is not an email address/],
    ['an email with a space', { email: 'alice smith@example.com' }, '/body/email', /email is not an email address/],
    ['an email of 255 characters', { email: `${tooLong(64)}@${tooLong(186)}.com` }, '/body/email', /email is 255 characters long; at most 254 are allowed/],
    ['a number as the email', { email: 42 }, '/body/email', /must be string,null/],
    ['an empty display name', { displayName: '' }, '/body/displayName', /displayName is empty: give 1 to 200 characters, or null to clear it/],
    ['a display name of 201 characters', { displayName: tooLong(201) }, '/body/displayName', /displayName is 201 characters long; at most 200 are allowed/],
    ['a display name with a tab', { displayName: 'Alice\tExample' }, '/body/displayName', /displayName contains a control character/],
    ['an unknown field', { displayName: 'Alice', name: 'Alice' }, '/body/name', /is not a known field/],
  ])('refuses %s with one clear message, changing nothing', async (_, payload, path, message) => {
    await member('refused', { displayName: 'Kept', email: 'kept@example.com', tags: Object.fromEntries(Object.entries(tenTags).slice(0, 9)) });
    const before = await read('refused');
    const audits = (await profileAudits('refused')).length;
    t.clock.advance(1);
    const problem = expectProblem(await patch('refused', payload), 400, 'validation_failed', path);
    expect(problem.errors).toHaveLength(1);
    expect(problem.errors![0]!.message).toMatch(message);
    expect(await read('refused')).toEqual(before);
    expect(await profileAudits('refused')).toHaveLength(audits);
  });

  it('counts a display name in characters: 200 emoji are allowed', async () => {
    await member('emoji');
    const name = '\u{1F600}'.repeat(200);
    expect((await patch('emoji', { displayName: name })).json()).toMatchObject({ displayName: name });
    expect((await patch('emoji', { email: `${'a'.repeat(64)}@${'b'.repeat(185)}.com` })).statusCode).toBe(200);
  });

  it('answers end_user_not_found for a member the server does not have, and makes none', async () => {
    const problem = expectProblem(await patch('nobody', { displayName: 'Nobody' }), 404, 'end_user_not_found');
    expect(problem.detail).not.toContain('nobody');
    await member('theirs', { displayName: 'Theirs' }, other);
    expectProblem(await patch('theirs', { displayName: 'Mine now' }), 404, 'end_user_not_found');
    expect(await read('theirs', keys(other))).toMatchObject({ displayName: 'Theirs' });
    const made = await t.ctx.store.db.selectFrom('audience_members').select('id').where('external_user_id', '=', 'nobody').execute();
    expect(made).toEqual([]);
  });

  it('needs both keys, like every /v1 route', async () => {
    await member('guarded');
    const response = await t.app.inject({
      method: 'PATCH',
      url: '/v1/end-users/guarded',
      headers: { authorization: headers.authorization!, 'content-type': 'application/json' },
      payload: '{"displayName":"x"}',
    });
    expectProblem(response, 401, 'service_key_missing');
    const browser = await t.app.inject({
      method: 'PATCH',
      url: '/v1/end-users/guarded',
      headers: { ...headers, origin: 'https://app.example', 'content-type': 'application/json' },
      payload: '{"displayName":"x"}',
    });
    expectProblem(browser, 403, 'browser_access_forbidden');
    expect(await read('guarded')).toMatchObject(UNSET);
  });

  describe('the tag filter of the list', () => {
    let lister: Tenant;
    let as: Record<string, string>;
    /** [id, tags, with an openai credential]: made in this order, one second apart. */
    const AUDIENCE: [string, Record<string, string>, boolean][] = [
      ['t01', { plan: 'pro', region: 'eu' }, true],
      ['t02', { plan: 'free', region: 'eu' }, false],
      ['t03', { plan: 'pro' }, false],
      ['x04', { plan: 'pro', region: 'eu' }, false],
      ['t05', { plan: 'pro', region: 'us' }, true],
      ['t06', {}, true],
      ['t07', { plan: 'pro', region: 'eu' }, true],
      ['t08', { plan: 'Pro', region: 'eu' }, false],
      ['t09', { plan: 'pro', region: 'eu' }, false],
      ['t10', { note: 'a:b' }, false],
    ];

    beforeAll(async () => {
      lister = await createTenant(t.ctx);
      as = keys(lister);
      for (const [id, tags, credential] of AUDIENCE) {
        t.clock.advance(1);
        if (credential) await connectStatic(t.app, as, { externalUserId: id, values: { apiKey: OPENAI_KEY } });
        await member(id, { tags }, lister);
      }
    });

    const expected = (tags: Record<string, string>, options: { provider?: boolean; prefix?: string } = {}) =>
      AUDIENCE.filter(
        ([id, has, credential]) =>
          Object.entries(tags).every(([k, v]) => has[k] === v) && (!options.provider || credential) && (!options.prefix || id.startsWith(options.prefix)),
      ).map(([id]) => id);

    /** Every page to the end, `limit` a page. */
    async function walk(query: Record<string, string | string[]>, limit: number): Promise<string[]> {
      const seen: string[] = [];
      let cursor: string | null = null;
      for (let page = 0; page < 50; page++) {
        const body = await listed({ ...query, limit: String(limit), ...(cursor ? { cursor } : {}) }, as);
        seen.push(...body.data.map((m) => m.externalUserId));
        if (!body.hasMore) return seen;
        expect(body.data).toHaveLength(limit);
        cursor = body.nextCursor;
      }
      throw new Error('the pages never ended');
    }

    it.each<[string, Record<string, string | string[]>, string[]]>([
      ['one tag', { tag: 'plan:pro' }, expected({ plan: 'pro' })],
      ['one tag, case-sensitive', { tag: 'plan:Pro' }, ['t08']],
      ['a value with colons', { tag: 'note:a:b' }, ['t10']],
      ['two tags', { tag: ['plan:pro', 'region:eu'] }, expected({ plan: 'pro', region: 'eu' })],
      ['the same tag twice', { tag: ['plan:pro', 'plan:pro'] }, expected({ plan: 'pro' })],
      ['two values of one key', { tag: ['plan:pro', 'plan:free'] }, []],
      ['a tag and a provider', { tag: 'plan:pro', provider: 'openai' }, expected({ plan: 'pro' }, { provider: true })],
      ['two tags and a provider', { tag: ['region:eu', 'plan:pro'], provider: 'openai' }, expected({ plan: 'pro', region: 'eu' }, { provider: true })],
      ['a tag and a prefix', { tag: 'plan:pro', prefix: 't' }, expected({ plan: 'pro' }, { prefix: 't' })],
      ['everything', { tag: ['plan:pro', 'region:eu'], prefix: 't0', provider: 'openai' }, ['t01', 't07']],
      ['a tag nobody has', { tag: 'plan:enterprise' }, []],
    ])('lists every match once, in order, across pages: %s', async (_, query, want) => {
      expect(want.length).toBeLessThan(AUDIENCE.length);
      for (const limit of [1, 2, 100]) expect(await walk(query, limit)).toEqual(want);
      const page = await listed({ ...query, limit: '100' }, as);
      for (const shown of page.data) expect(shown.tags).toEqual(AUDIENCE.find(([id]) => id === shown.externalUserId)![1]);
    });

    it('continues from a cursor of the unfiltered list at the same place', async () => {
      const first = await listed({ limit: '3' }, as);
      expect(first.data.map((m) => m.externalUserId)).toEqual(['t01', 't02', 't03']);
      const next = await listed({ tag: 'plan:pro', cursor: first.nextCursor!, limit: '100' }, as);
      expect(next.data.map((m) => m.externalUserId)).toEqual(['x04', 't05', 't07', 't09']);
    });

    it('shows a member tagged while paging on a later page, skipping and repeating none, and drops an untagged one', async () => {
      for (const id of ['t02', 't09']) expect((await patch(id, { tags: { late: 'yes' } }, as)).statusCode).toBe(200);
      const seen: string[] = [];
      let cursor: string | null = null;
      for (let page = 0; page < 20; page++) {
        const body = await listed({ tag: 'late:yes', limit: '1', ...(cursor ? { cursor } : {}) }, as);
        seen.push(...body.data.map((m) => m.externalUserId));
        if (page === 0) {
          // A new member, tagged after the first page: it comes last in the list's order.
          t.clock.advance(1);
          await member('t11', { tags: { late: 'yes' } }, lister);
        }
        if (!body.hasMore) break;
        cursor = body.nextCursor;
      }
      expect(seen).toEqual(['t02', 't09', 't11']);
      await patch('t02', { tags: { late: null } }, as);
      expect(await walk({ tag: 'late:yes' }, 1)).toEqual(['t09', 't11']);
    });

    it.each<[string, string | string[], RegExp]>([
      ['no colon', 'plan', /Each tag filter is key:value, such as tag=plan:pro; "plan" has no colon/],
      ['an empty key', ':pro', /The tag filter's key "" is not allowed: a tag key is 1 to 40 characters of a-z, 0-9/],
      ['an upper-case key', 'Plan:pro', /The tag filter's key "Plan" is not allowed/],
      ['a key of 41 characters', `${'k'.repeat(41)}:v`, /is not allowed: a tag key is 1 to 40 characters/],
      ['a value of 201 characters', `plan:${'v'.repeat(201)}`, /The value of tag filter "plan" is longer than 200 characters/],
      ['a value with a control character', 'plan:a\u0001b', /The value of tag filter "plan" contains a control character/],
      ['eleven filters', Array.from({ length: 11 }, (_, i) => `k${i}:v`), /At most 10 tag filters are allowed; 11 were given/],
      ['one bad filter among good ones', ['plan:pro', 'bad'], /"bad" has no colon/],
    ])('refuses a tag filter with %s: 400 validation_failed at /query/tag', async (_, tag, message) => {
      const response = await t.app.inject({ method: 'GET', url: '/v1/end-users', query: { tag }, headers: as });
      const problem = expectProblem(response, 400, 'validation_failed', '/query/tag');
      expect(problem.detail).toMatch(message);
      expect(problem.errors![0]!.message).toMatch(message);
    });
  });
});
