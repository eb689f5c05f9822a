/**
 * The Audience tab shows each end user's profile (CONTRACT 10) beneath its id: display name, email
 * and tags, escaped, nothing where unset; its tag filter picks end users as GET /v1/end-users?tag=
 * does, and a malformed one is refused with the service's words. Over app.inject, on both engines.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setEndUserProfile } from '../../src/services/audience/end-user-profile.js';
import { CLI_ACTOR } from '../../src/services/context.js';
import { createAccountKey } from '../../src/services/keys/account-keys.js';
import { enableProvider } from '../../src/services/providers/server-providers.js';
import { createServer } from '../../src/services/servers/servers.js';
import { type DashboardClient, newSignedInUser, visible } from '../helpers/dashboard-session.js';
import { ENGINES } from '../helpers/databases.js';
import { connectStatic } from '../helpers/hosted-form.js';
import { keys, startTestApp, type TestApp } from '../helpers/test-app.js';

describe.each(ENGINES)('end users’ profiles on the Audience tab on %s', (engine) => {
  let t: TestApp;
  let client: DashboardClient;
  let page: string;

  beforeAll(async () => {
    t = await startTestApp(engine);
    const user = await newSignedInUser(t.app, t.ctx.store.db, 'Profiles');
    client = user.client;
    const { serverId, serverKey } = await createServer(t.ctx, { accountId: user.accountId, name: 'Production', mode: 'business', actor: CLI_ACTOR });
    await enableProvider(t.ctx, { serverId, slug: 'openai', actor: CLI_ACTOR });
    const { key } = await createAccountKey(t.ctx, { accountId: user.accountId, label: 'backend', actor: CLI_ACTOR });
    page = `/dashboard/servers/${serverId}/audience`;
    const profile = (externalUserId: string, change: Parameters<typeof setEndUserProfile>[1]['change']) =>
      setEndUserProfile(t.ctx, { accountId: user.accountId, serverId, externalUserId, change, makeIfNew: true, actor: CLI_ACTOR });
    t.clock.advance(1);
    await connectStatic(t.app, keys({ accountKey: key, serverKey }), { externalUserId: 'alice', values: { apiKey: 'sk-proj-profilesPageValue0123456789' } });
    await profile('alice', { displayName: 'Alice <b>Example</b>', email: 'alice@example.com', tags: { plan: 'pro', region: 'eu' } });
    t.clock.advance(1);
    await profile('bob', { tags: { plan: 'free' } });
    t.clock.advance(1);
    await profile('carol', {});
  });
  afterAll(() => t.close());

  it('shows the display name, email and tags beneath each id, escaped, and nothing where unset', async () => {
    const response = await client.get(page);
    expect(response.statusCode).toBe(200);
    const text = visible(response.body, ' ');
    expect(text).toMatch(/alice\s+Alice <b>Example<\/b>\s+alice@example\.com\s+plan: pro\s+region: eu\s+\d{4}-/);
    expect(text).toMatch(/bob\s+plan: free\s+\d{4}-/);
    expect(text).toMatch(/carol\s+\d{4}-/);
    expect(response.body).toContain('Alice &lt;b&gt;Example&lt;/b&gt;');
    expect(response.body).not.toContain('<b>Example</b>');
    expect(response.body).toContain('<span class="badge">plan: pro</span>');
    expect(response.body).not.toContain('sk-proj-profilesPageValue');
  });

  it('filters by a tag, alone and beside the other filters', async () => {
    const byTag = visible((await client.get(`${page}?tag=${encodeURIComponent('plan:pro')}`)).body, ' ');
    expect(byTag).toContain('alice');
    expect(byTag).not.toMatch(/\bbob\b|\bcarol\b/);
    expect(byTag).toContain('Clear filter');
    const withPrefix = visible((await client.get(`${page}?tag=${encodeURIComponent('plan:free')}&prefix=b`)).body, ' ');
    expect(withPrefix).toMatch(/bob\s+plan: free/);
    expect(withPrefix).not.toContain('alice');
    const none = visible((await client.get(`${page}?tag=${encodeURIComponent('plan:enterprise')}`)).body, ' ');
    expect(none).toContain('No end users match this filter.');
  });

  it('refuses a malformed tag filter beside its field with the service’s words, keeping it for mending and showing nobody', async () => {
    const response = await client.get(`${page}?tag=plan&prefix=a`);
    expect(response.statusCode).toBe(422);
    const text = visible(response.body, ' ');
    expect(text).toContain('Each tag filter is key:value, such as tag=plan:pro; "plan" has no colon.');
    expect(response.body).toMatch(/<input id="field-tag" name="tag" type="text" value="plan"[^>]*aria-invalid="true"/);
    expect(response.body).toMatch(/<input id="field-prefix" name="prefix" type="text" value="a"/);
    expect(response.body).not.toContain('alice@example.com');
    expect(text).toContain('No end users match this filter.');
  });
});
