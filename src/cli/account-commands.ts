/** `keyward account …`: accounts, made from the command line (with their first dashboard user). */
import { createAccount } from '../services/users/accounts.js';
import { type Command, optional, str } from './commands.js';

export const commands: Record<string, Command> = {
  'account create': {
    usage: 'account create --name N --email E [--password P]',
    options: { name: { type: 'string', required: true }, email: { type: 'string', required: true }, password: { type: 'string' } },
    run: (ctx, o) => createAccount(ctx, { name: str(o, 'name'), email: str(o, 'email'), password: optional(o, 'password') }),
    text: (r) => `Account ${r.accountId} created, with user ${r.userId}.`,
    // Said only to a person: --json prints its object exactly, and a script knows what it passed.
    notice: (o, r) =>
      optional(o, 'password') === undefined
        ? `user ${r.userId} has no password and cannot sign in to the dashboard until one is set: keyward user set-password --user ${r.userId}`
        : undefined,
  },
};
