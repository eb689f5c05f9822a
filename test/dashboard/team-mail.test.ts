/**
 * Invitations by email (CONTRACT 5 and 9): with KEYWARD_SMTP_URL set, "Invite" sends the link through
 * a real SMTP server running in this process (smtp-server on 127.0.0.1), and the link in the message
 * joins. With the server down, the invitation exists all the same, its link is shown once and the
 * page says the email could not be sent; no log line holds the link. And the two variables are read
 * strictly: a bad value stops start-up with one line naming the variable.
 */
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerSession } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { newSignedInUser, visible } from '../helpers/dashboard-session.js';
import { ENGINES } from '../helpers/databases.js';
import { inviteOnPage, joinWithLink } from '../helpers/team.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

const FROM = 'Keyward <keyward@mail.example>';
const BASE_ENV = { KEYWARD_DATABASE_URL: 'postgres://db.internal/keyward', KEYWARD_MASTER_KEY: randomBytes(32).toString('base64') };

interface Received {
  from: string;
  to: string[];
  raw: string;
}

/** A real SMTP server on 127.0.0.1 that keeps every message it is given. */
async function startSmtpServer() {
  const received: Received[] = [];
  const server = new SMTPServer({
    authOptional: true,
    // Plain SMTP on loopback: no certificate for STARTTLS to check.
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session: SMTPServerSession, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const envelope = session.envelope;
        received.push({
          from: envelope.mailFrom ? envelope.mailFrom.address : '',
          to: envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  let closed: Promise<void> | undefined;
  const close = () => (closed ??= new Promise<void>((resolve) => server.close(() => resolve())));
  return { received, port, close };
}

/** A message's headers (unfolded) and its body, quoted-printable decoded. */
function parse(raw: string): { headers: Record<string, string>; body: string } {
  const [head, ...rest] = raw.split('\r\n\r\n');
  const headers: Record<string, string> = {};
  for (const line of head!.replace(/\r\n[ \t]+/g, ' ').split('\r\n')) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = rest.join('\r\n\r\n');
  if (/quoted-printable/i.test(headers['content-transfer-encoding'] ?? '')) {
    body = body.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
  }
  return { headers, body: body.replace(/\r\n/g, '\n') };
}

describe.each(ENGINES)('invitation emails on %s', (engine) => {
  let t: TestApp;
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
  beforeAll(async () => {
    smtp = await startSmtpServer();
    const config = loadConfig({ ...BASE_ENV, KEYWARD_SMTP_URL: `smtp://127.0.0.1:${smtp.port}`, KEYWARD_MAIL_FROM: FROM });
    t = await startTestApp(engine, { mail: config.mail! });
  });
  afterAll(async () => {
    await smtp.close();
    await t.close();
  });

  it('emails the link to the invited person, and the link in the message joins', async () => {
    const { client, accountId } = await newSignedInUser(t.app, t.ctx.store.db, 'Mailer');
    const accountName = (await t.ctx.store.accounts.nameOf(accountId))!;
    const invited = `mailed-${engine}@team.example`;
    const { response, url } = await inviteOnPage(client, invited, 'developer');
    expect(response.statusCode).toBe(200);
    expect(visible(response.body)).toContain(`The invitation was emailed to ${invited}.`);

    expect(smtp.received).toHaveLength(1);
    const [message] = smtp.received;
    expect(message!.from).toBe('keyward@mail.example');
    expect(message!.to).toEqual([invited]);
    const { headers, body } = parse(message!.raw);
    expect(headers.from).toBe(FROM);
    expect(headers.to).toBe(invited);
    expect(headers.subject).toBe(`Join ${accountName} on Keyward`);
    expect(headers['content-type']).toMatch(/^text\/plain/);
    const link = /^(http:\/\/keyward\.test\/dashboard\/join\/[A-Za-z0-9_-]{43})$/m.exec(body)?.[1];
    // The link shown once on the page, and the one in the message, are the same single link.
    expect(link).toBe(url);
    expect(body).toContain(`You are invited to join ${accountName} on Keyward as a developer.`);
    const expiresAt = (await t.ctx.store.db.selectFrom('team_invitations').select('expires_at').where('email', '=', invited).executeTakeFirstOrThrow())
      .expires_at;
    expect(body).toContain(`The link works once and expires on ${expiresAt.slice(0, 10)} ${expiresAt.slice(11, 16)} UTC.`);

    const joined = await joinWithLink(t.app, link!);
    expect(joined.response.statusCode).toBe(303);
    expect((await joined.client.get('/dashboard/servers')).statusCode).toBe(200);
    expect(t.logs.join('\n')).not.toContain(link!);
  });

  it('keeps the invitation and shows its link when the SMTP server is down, saying the email was not sent', async () => {
    await smtp.close();
    const { client, accountId } = await newSignedInUser(t.app, t.ctx.store.db, 'Mailer');
    const invited = `unmailed-${engine}@team.example`;
    const { response, url, token } = await inviteOnPage(client, invited, 'viewer');
    expect(response.statusCode).toBe(200);
    expect(url).toBeDefined();
    expect(visible(response.body)).toContain(
      `The email to ${invited} could not be sent. The invitation exists all the same: copy the link and send it to them yourself.`,
    );
    const rows = await t.ctx.store.db.selectFrom('team_invitations').select(['email', 'used_at']).where('account_id', '=', accountId).execute();
    expect(rows).toEqual([{ email: invited, used_at: null }]);
    // The failure is logged by its reason only: never the link.
    const warning = t.logs.find((line) => line.includes('invitation email could not be sent'));
    expect(warning).toBeDefined();
    expect(JSON.parse(warning!)).toMatchObject({ level: 40, reason: expect.any(String) });
    expect(t.logs.join('\n')).not.toContain(token!);

    expect((await joinWithLink(t.app, url!)).response.statusCode).toBe(303);
  });
});

describe('KEYWARD_SMTP_URL and KEYWARD_MAIL_FROM', () => {
  function refusal(env: Record<string, string>): string {
    try {
      loadConfig({ ...BASE_ENV, ...env });
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return (error as Error).message;
    }
    throw new Error('the configuration was accepted');
  }

  it('reads the server, its port, TLS and credentials; none set emails nothing', () => {
    expect(loadConfig(BASE_ENV).mail).toBeNull();
    expect(loadConfig({ ...BASE_ENV, KEYWARD_SMTP_URL: 'smtps://ops%40acme:p%3Ass@smtp.acme.example:465', KEYWARD_MAIL_FROM: FROM }).mail).toEqual({
      smtp: { host: 'smtp.acme.example', port: 465, secure: true, auth: { user: 'ops@acme', pass: 'p:ss' } },
      from: FROM,
    });
    expect(loadConfig({ ...BASE_ENV, KEYWARD_SMTP_URL: 'smtp://[::1]/', KEYWARD_MAIL_FROM: 'keyward@acme.example' }).mail).toEqual({
      smtp: { host: '::1', port: undefined, secure: false, auth: undefined },
      from: 'keyward@acme.example',
    });
  });

  it('stops on a bad value with one line naming the variable, never printing the URL', () => {
    for (const url of [
      'http://u:hunter2@smtp.acme.example',
      'smtp://',
      'smtp://u:hunter2@smtp.acme.example/path',
      'smtp://smtp.acme.example?tls=no',
      'not a url hunter2',
    ]) {
      const message = refusal({ KEYWARD_SMTP_URL: url, KEYWARD_MAIL_FROM: FROM });
      expect(message, url).toMatch(/^KEYWARD_SMTP_URL: must be smtp:\/\/\[user:password@\]host\[:port\] or smtps:\/\//);
      expect(message).not.toContain('hunter2');
      expect(message.split('\n')).toHaveLength(1);
    }
    expect(refusal({ KEYWARD_SMTP_URL: 'smtp://smtp.acme.example' })).toMatch(/^KEYWARD_MAIL_FROM: is required with KEYWARD_SMTP_URL/);
    expect(refusal({ KEYWARD_MAIL_FROM: FROM })).toMatch(/^KEYWARD_MAIL_FROM: is set but KEYWARD_SMTP_URL is not/);
    for (const from of ['keyward', 'Keyward <keyward@acme.example>\r\nBcc: x@evil.example', '<>']) {
      expect(refusal({ KEYWARD_SMTP_URL: 'smtp://smtp.acme.example', KEYWARD_MAIL_FROM: from })).toMatch(/^KEYWARD_MAIL_FROM: must be an email address/);
    }
  });
});
