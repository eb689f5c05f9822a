/**
 * `keyward user …`: an account's dashboard users (CONTRACT 4 and 9). The CLI is the operator, who may
 * do anything a role may (OPERATOR), yet the team's own rule holds for it too: the last owner stays.
 * `invite` prints the link once; `list` never prints a link or a secret.
 */

import { CLI_ACTOR } from '../services/context.js';
import { usersWithMfa } from '../services/mfa/mfa-policy.js';
import { type InvitationEmailOutcome, invite } from '../services/team/invitations.js';
import { isTeamRole, TEAM_ROLES, type TeamRole } from '../services/team/roles.js';
import { OPERATOR } from '../services/team/team-actor.js';
import { changeRole, listTeam, removeUser } from '../services/team/team-users.js';
import { setUserPassword } from '../services/users/accounts.js';
import { type Command, type Options, str } from './commands.js';
import { UsageError } from './parse-options.js';
import { readSecret } from './standard-input.js';

/** --role's value: a role, or a usage error naming the flag (exit 2). */
function roleOption(options: Options): TeamRole {
  const role = str(options, 'role');
  if (!isTeamRole(role)) throw new UsageError(`--role must be one of ${TEAM_ROLES.join(', ')}, got ${JSON.stringify(role)}`);
  return role;
}

/**
 * What became of the invitation's email, for the person at the terminal only: --json prints the
 * contract's three fields and nothing else, so it is kept off the object's own (enumerable) fields.
 */
const emailOutcomes = new WeakMap<object, { email: string; emailed: InvitationEmailOutcome }>();

const EMAIL_NOTICES: Record<InvitationEmailOutcome, string | undefined> = {
  sent: undefined,
  off: undefined,
  failed: 'the invitation email could not be sent (see the SMTP settings, KEYWARD_SMTP_URL): give the link to the person yourself',
};

export const commands: Record<string, Command> = {
  'user invite': {
    usage: 'user invite --account A --email E --role owner|admin|developer|viewer',
    options: { account: { type: 'string', required: true }, email: { type: 'string', required: true }, role: { type: 'string', required: true } },
    run: async (ctx, o) => {
      const made = await invite(ctx, { accountId: str(o, 'account'), email: str(o, 'email'), role: roleOption(o), actor: OPERATOR });
      const result = { invitationId: made.invitationId, url: made.url, expiresAt: made.expiresAt };
      emailOutcomes.set(result, { email: str(o, 'email').trim().toLowerCase(), emailed: made.emailed });
      return result;
    },
    text: (r) => {
      const outcome = emailOutcomes.get(r);
      const emailed = outcome?.emailed === 'sent' ? ` It was emailed to ${outcome.email}.` : '';
      return `Invitation ${r.invitationId}, valid until ${r.expiresAt}, single-use:\n${r.url}\n(the link is shown once: only a digest of it is kept.${emailed})`;
    },
    notice: (_o, r) => {
      const outcome = emailOutcomes.get(r);
      return outcome && EMAIL_NOTICES[outcome.emailed];
    },
  },
  'user list': {
    usage: 'user list --account A',
    options: { account: { type: 'string', required: true } },
    run: async (ctx, o) => {
      const team = await listTeam(ctx, str(o, 'account'));
      // mfa: whether the user's one-time codes are on (confirmed).
      const withMfa = await usersWithMfa(ctx, str(o, 'account'));
      return {
        users: team.users.map((u) => ({
          id: u.id,
          email: u.email,
          role: u.role,
          createdAt: u.createdAt,
          lastSignInAt: u.lastSignInAt,
          mfa: withMfa.has(u.id),
          sso: u.sso,
        })),
        invitations: team.invitations.map((i) => ({ id: i.id, email: i.email, role: i.role, expiresAt: i.expiresAt })),
      };
    },
    text: (r) => {
      const users = r.users as { id: string; email: string; role: string; lastSignInAt: string | null }[];
      const invitations = r.invitations as { id: string; email: string; role: string; expiresAt: string }[];
      return [
        ...users.map((u) => `${u.id}  ${u.email}  ${u.role}  ${u.lastSignInAt ? `last signed in ${u.lastSignInAt}` : 'never signed in'}`),
        ...invitations.map((i) => `${i.id}  ${i.email}  ${i.role}  invited, until ${i.expiresAt}`),
      ].join('\n');
    },
  },
  'user role': {
    usage: 'user role --user U --role R',
    options: { user: { type: 'string', required: true }, role: { type: 'string', required: true } },
    run: (ctx, o) => changeRole(ctx, { userId: str(o, 'user'), role: roleOption(o), actor: OPERATOR }),
    text: (r) => `User ${r.userId} is now ${r.role}, from their next request on.`,
  },
  'user remove': {
    usage: 'user remove --user U',
    options: { user: { type: 'string', required: true } },
    run: (ctx, o) => removeUser(ctx, { userId: str(o, 'user'), actor: OPERATOR }),
    text: (r) => `User ${r.userId} was removed at ${r.removedAt}; their sessions ended with them.`,
  },
  'user set-password': {
    usage: 'user set-password --user U',
    options: { user: { type: 'string', required: true } },
    input: () => readSecret('New password: '),
    run: (ctx, o, password) => setUserPassword(ctx, { userId: str(o, 'user'), password: password ?? '', actor: CLI_ACTOR }),
    text: (r) => `Password of ${r.userId} set: they can sign in to the dashboard with it. Any session they had was ended.`,
  },
};
