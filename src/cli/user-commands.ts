/**
 * `keyward user …`: the account's dashboard users. Only set-password so far (CONTRACT 4 lists the
 * team's invite, list, role and remove, which come with the team).
 */

import { CLI_ACTOR } from '../services/context.js';
import { setUserPassword } from '../services/users/accounts.js';
import { type Command, str } from './commands.js';
import { readSecret } from './standard-input.js';

export const commands: Record<string, Command> = {
  'user set-password': {
    usage: 'user set-password --user U',
    options: { user: { type: 'string', required: true } },
    input: () => readSecret('New password: '),
    run: (ctx, o, password) => setUserPassword(ctx, { userId: str(o, 'user'), password: password ?? '', actor: CLI_ACTOR }),
    text: (r) => `Password of ${r.userId} set: they can sign in to the dashboard with it. Any session they had was ended.`,
  },
};
