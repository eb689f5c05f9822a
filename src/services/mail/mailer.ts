/**
 * Email, when the operator configured an SMTP server (KEYWARD_SMTP_URL and KEYWARD_MAIL_FROM, CONTRACT
 * 5): plain-text messages sent with nodemailer, a well-kept mail library, so that SMTP, STARTTLS and
 * header encoding are not ours to get right.
 *
 * nodemailer is loaded on the first message, not with the context: the CLI opens the same context as
 * the service, and most of its commands never send one (bench/cli-startup.ts).
 */
import type { MailSettings } from '../../config.js';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  /** Resolves once the SMTP server accepted the message; rejects when it could not be handed over. */
  send(message: MailMessage): Promise<void>;
}

/**
 * How long a message may take to hand over: a person waits on the page for it, so an SMTP server
 * that does not answer costs seconds, not nodemailer's default minutes.
 */
const CONNECT_TIMEOUT_MS = 10_000;
const SOCKET_TIMEOUT_MS = 20_000;

export function smtpMailer(settings: MailSettings): Mailer {
  let transport: Promise<{ sendMail(options: Record<string, unknown>): Promise<unknown> }> | undefined;
  const made = () =>
    (transport ??= import('nodemailer').then((nodemailer) =>
      nodemailer.createTransport({
        host: settings.smtp.host,
        ...(settings.smtp.port !== undefined ? { port: settings.smtp.port } : {}),
        secure: settings.smtp.secure,
        // With a password, `smtp://` must still upgrade with STARTTLS: a server (or anyone between) that
        // offers no STARTTLS gets no password in clear, the send fails instead.
        ...(settings.smtp.auth ? { auth: settings.smtp.auth, requireTLS: !settings.smtp.secure } : {}),
        connectionTimeout: CONNECT_TIMEOUT_MS,
        greetingTimeout: CONNECT_TIMEOUT_MS,
        socketTimeout: SOCKET_TIMEOUT_MS,
        // The messages are text we wrote: nothing in them is to be read from a file or a URL.
        disableFileAccess: true,
        disableUrlAccess: true,
      }),
    ));
  return {
    async send(message) {
      // The recipient as one address, never parsed as a list: an email that holds a comma stays one recipient.
      const to = { name: '', address: message.to };
      await (await made()).sendMail({ from: settings.from, to, subject: message.subject, text: message.text });
    },
  };
}
