/**
 * The email of a team invitation (CONTRACT 9): plain text, the link, when it expires and which account
 * it joins. It carries the link, so it is composed only to be sent, and never logged.
 */
import type { TeamRole } from '../../store/schema.js';
import type { MailMessage } from './mailer.js';

const ARTICLE: Record<TeamRole, string> = { owner: 'an owner', admin: 'an admin', developer: 'a developer', viewer: 'a viewer' };

export function invitationEmail(invitation: { to: string; accountName: string; role: TeamRole; url: string; expiresAt: string }): MailMessage {
  // The account's name is the customer's own text: on one line in the subject, whatever it holds.
  const accountName = invitation.accountName.replace(/\s+/g, ' ').trim();
  const expires = `${invitation.expiresAt.slice(0, 10)} ${invitation.expiresAt.slice(11, 16)} UTC`;
  return {
    to: invitation.to,
    subject: `Join ${accountName} on Keyward`,
    text: [
      `You are invited to join ${accountName} on Keyward as ${ARTICLE[invitation.role]}.`,
      '',
      'Open this link to choose your password and join:',
      '',
      invitation.url,
      '',
      `The link works once and expires on ${expires}. If you did not expect this invitation, you can ignore this email.`,
      '',
    ].join('\n'),
  };
}
