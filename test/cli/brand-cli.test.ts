/**
 * `keyward server brand` (CONTRACT 4 and 10) as a real process on a real database, beside a test node
 * on the same database: the one JSON object `{"serverId","displayName","accentColor","logo"}` (the logo
 * as the URL Keyward serves it at, or null), the logo file judged by its bytes, `--no-logo`, empty
 * values clearing a field, and each refusal one line on stderr (exit 1) or a usage error (exit 2),
 * changing nothing.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readBranding } from '../../src/services/branding/branding.js';
import { type CliRun, cliEnv, cliJson, runCli } from '../helpers/cli-process.js';
import { auditEventsOf } from '../helpers/dashboard-session.js';
import { ENGINES } from '../helpers/databases.js';
import { snapshotTables } from '../helpers/hosted-form.js';
import { BAD_LOGOS, pngLogo, SVG_LOGO } from '../helpers/logo-files.js';
import { createTenant, startTestApp, type TestApp } from '../helpers/test-app.js';

const SLOW = 180_000;
const PUBLIC_URL = 'https://keyward.example';

/** A refusal: exit 1, nothing on stdout, the one line on stderr. */
function expectRefused(run: CliRun, message: string | RegExp) {
  expect(run.stdout).toBe('');
  expect(run.stderr).toMatch(/^keyward: [^\n]+\n$/);
  if (typeof message === 'string') expect(run.stderr).toBe(`keyward: ${message}\n`);
  else expect(run.stderr).toMatch(message);
  expect(run.code).toBe(1);
}

describe.each(ENGINES)('keyward server brand on %s', (engine) => {
  let t: TestApp;
  let env: NodeJS.ProcessEnv;
  let serverId: string;
  let accountId: string;
  const dir = mkdtempSync(join(tmpdir(), 'keyward-brand-'));
  const file = (name: string, bytes: Buffer | string) => {
    const path = join(dir, name);
    writeFileSync(path, bytes);
    return path;
  };
  beforeAll(async () => {
    t = await startTestApp(engine);
    ({ serverId, accountId } = await createTenant(t.ctx));
    env = cliEnv({ KEYWARD_DATABASE_URL: t.database.url, KEYWARD_MASTER_KEY: t.masterKey.toString('base64'), KEYWARD_PUBLIC_URL: PUBLIC_URL });
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await t?.close();
  });

  it('sets the name, the colour and an SVG logo, and prints the branding with the URL the logo is served at', { timeout: SLOW }, async () => {
    const svg = file('logo.svg', SVG_LOGO);
    const set = await cliJson(env, ['server', 'brand', '--server', serverId, '--display-name', 'Acme Payroll', '--accent-color', '#0F766E', '--logo', svg]);
    expect(Object.keys(set).sort()).toEqual(['accentColor', 'displayName', 'logo', 'serverId']);
    expect(set).toMatchObject({ serverId, displayName: 'Acme Payroll', accentColor: '#0f766e' });
    expect(set.logo).toMatch(new RegExp(`^${PUBLIC_URL}/branding/${serverId}/logo-[0-9a-f]{16}$`));
    const stored = await readBranding(t.ctx, serverId);
    expect(`${PUBLIC_URL}${stored.logoUrl}`).toBe(set.logo);
    const served = await t.app.inject({ method: 'GET', url: stored.logoUrl! });
    expect(served.statusCode).toBe(200);
    expect(served.headers['content-type']).toBe('image/svg+xml');
    expect(served.body).toBe(SVG_LOGO);

    // No flag but --server: the branding as it is, and nothing written.
    const events = (await auditEventsOf(t.ctx.store.db, accountId, 'server.branding_changed')).length;
    expect(await cliJson(env, ['server', 'brand', '--server', serverId])).toEqual(set);
    expect((await auditEventsOf(t.ctx.store.db, accountId, 'server.branding_changed')).length).toBe(events);
    expect(events).toBe(1);

    // A PNG named .svg is a PNG: the bytes say so.
    const png = await cliJson(env, ['server', 'brand', '--server', serverId, '--logo', file('actually-a-png.svg', pngLogo())]);
    const pngServed = await t.app.inject({ method: 'GET', url: new URL(png.logo as string).pathname });
    expect(pngServed.headers['content-type']).toBe('image/png');

    const text = await runCli(env, ['server', 'brand', '--server', serverId]);
    expect(text.code).toBe(0);
    expect(text.stdout).toBe(`Branding of ${serverId}:\n  display name: Acme Payroll\n  accent colour: #0f766e\n  logo: ${png.logo}\n`);

    const cleared = await cliJson(env, ['server', 'brand', '--server', serverId, '--no-logo', '--display-name=', '--accent-color', '']);
    expect(cleared).toEqual({ serverId, displayName: null, accentColor: null, logo: null });
    const audit = await auditEventsOf(t.ctx.store.db, accountId, 'server.branding_changed');
    expect(audit.map((e) => e.actor)).toEqual(['cli', 'cli', 'cli']);
    expect(JSON.parse(audit[2]!.detail)).toEqual({
      displayName: { from: 'Acme Payroll', to: null },
      accentColor: { from: '#0f766e', to: null },
      logo: { change: 'removed' },
    });
  });

  it('refuses a bad logo, a bad colour, an unreadable file and an unknown server with one line, and changes nothing', { timeout: SLOW }, async () => {
    await cliJson(env, ['server', 'brand', '--server', serverId, '--display-name', 'Kept', '--logo', file('kept.png', pngLogo())]);
    const before = await snapshotTables(t.ctx);
    const bad = (name: string) => BAD_LOGOS.find((b) => b.name === name)!;
    const brand = (...args: string[]) => runCli(env, ['server', 'brand', '--server', serverId, '--display-name', 'Changed', ...args, '--json']);
    const [text, jpeg, big, script, external, missing, colour, unknown] = await Promise.all([
      brand('--logo', file('notes.png', bad('a text file named .png').bytes)),
      brand('--logo', file('photo.png', bad('a JPEG').bytes)),
      brand('--logo', file('big.png', bad('a PNG of 64 KiB + 1').bytes)),
      brand('--logo', file('script.svg', bad('an SVG with <script>').bytes)),
      brand('--logo', file('external.svg', bad('an SVG with xlink:href to http').bytes)),
      brand('--logo', join(dir, 'nowhere.png')),
      brand('--accent-color', 'red'),
      runCli(env, ['server', 'brand', '--server', 'srv_nothing', '--display-name', 'x', '--json']),
    ]);
    expectRefused(text, 'the logo is not a PNG or SVG image');
    expectRefused(jpeg, 'the logo is a JPEG image; upload a PNG or an SVG');
    expectRefused(big, 'the logo is 65,537 bytes; it may be at most 64 KiB (65,536 bytes)');
    expectRefused(script, 'the SVG has a <script> element: a logo may not run code');
    expectRefused(external, /a reference outside itself \(xlink:href on <use>\)/);
    expectRefused(missing, `cannot read the logo file ${join(dir, 'nowhere.png')} (no such file)`);
    expectRefused(colour, 'the accent colour must be #rrggbb: a # and six hex digits, such as #2456d6');
    expectRefused(unknown, 'no server srv_nothing');

    const usage = await Promise.all([
      brand('--logo', file('x.png', pngLogo()), '--no-logo'),
      brand('--logo', ''),
      brand('--colour', '#ffffff'),
      runCli(env, ['server', 'brand', '--display-name', 'x']),
    ]);
    const words = ['--logo and --no-logo cannot be given together', '--logo needs a file', '--colour', '--server is required'];
    for (const [i, run] of usage.entries()) {
      expect(run.code, run.stderr).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(/^keyward: [^\n]+\n$/);
      expect(run.stderr).toContain(words[i]);
    }
    expect(await snapshotTables(t.ctx)).toEqual(before);
  });
});
