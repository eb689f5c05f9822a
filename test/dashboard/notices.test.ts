/**
 * `?notice=` (and the audience's `?revocation=`) name fixed texts; a name that every object has
 * (`constructor`, `toString`, `__proto__`) must show nothing, not the text of a function (issue 8, item 11).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ACTOR } from '../../src/services/context.js';
import { createServer } from '../../src/services/servers/servers.js';
import { DashboardClient, newSignedInUser } from '../helpers/dashboard-session.js';
import { ENGINES } from '../helpers/databases.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

const INHERITED = ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf'];

describe.each(ENGINES)('notice codes on %s', (engine) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(engine);
  });
  afterAll(() => t.close());

  it('shows no notice, and no function text, for a code every object inherits', async () => {
    const { client, accountId } = await newSignedInUser(t.app, t.ctx.store.db, 'Notices');
    const { serverId } = await createServer(t.ctx, { accountId, name: 'Production', mode: 'business', actor: CLI_ACTOR });
    const pages = (code: string) => [
      `/dashboard/servers/${serverId}?notice=${code}`,
      `/dashboard/servers/${serverId}/providers?notice=${code}`,
      `/dashboard/servers/${serverId}/audience?notice=credential-revoked&revocation=${code}`,
      `/dashboard/developer/api-keys?notice=${code}`,
    ];
    for (const code of INHERITED) {
      for (const url of pages(code)) {
        const response = await client.get(url);
        expect(response.statusCode, url).toBe(200);
        expect(response.body, url).not.toMatch(/function|native code|\[object/);
        if (!url.includes('revocation=')) expect(response.body, url).not.toContain('class="notice"');
      }
      const signIn = await new DashboardClient(t.app).get(`/dashboard/sign-in?notice=${code}`);
      expect(signIn.statusCode).toBe(200);
      expect(signIn.body).not.toMatch(/function|native code|class="notice"/);
    }
    // A known code still shows its text.
    expect((await client.get(`/dashboard/servers/${serverId}?notice=mode-changed`)).body).toContain('The mode was changed.');
    expect((await client.get(`/dashboard/servers/${serverId}/audience?notice=credential-revoked&revocation=constructor`)).body).toContain(
      'Credential revoked.',
    );
  });
});
