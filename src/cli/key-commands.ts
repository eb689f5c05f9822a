/** `keyward key …`: an account's API keys (only their hints once made). */

import { CLI_ACTOR } from '../services/context.js';
import { createAccountKey, listAccountKeys, revokeAccountKey } from '../services/keys/account-keys.js';
import { type Command, optional, SHOWN_ONCE, str } from './commands.js';

export const commands: Record<string, Command> = {
  'key create': {
    usage: 'key create --account A --label L [--environment production|staging|development|other] [--expires-at T]',
    options: {
      account: { type: 'string', required: true },
      label: { type: 'string', required: true },
      environment: { type: 'string' },
      'expires-at': { type: 'string' },
    },
    run: (ctx, o) =>
      createAccountKey(ctx, {
        accountId: str(o, 'account'),
        label: str(o, 'label'),
        environment: optional(o, 'environment'),
        expiresAt: optional(o, 'expires-at'),
        actor: CLI_ACTOR,
      }),
    text: (r) => `Account API key ${r.keyId} (${SHOWN_ONCE}):\n${r.key}`,
  },
  'key revoke': {
    usage: 'key revoke --key K',
    options: { key: { type: 'string', required: true } },
    run: (ctx, o) => revokeAccountKey(ctx, str(o, 'key'), CLI_ACTOR),
    text: (r) => `Account API key ${r.keyId} revoked at ${r.revokedAt}.`,
  },
  'key list': {
    usage: 'key list --account A',
    options: { account: { type: 'string', required: true } },
    run: async (ctx, o) => ({ keys: await listAccountKeys(ctx, str(o, 'account')) }),
    text: (r) => {
      const keys = r.keys as Awaited<ReturnType<typeof listAccountKeys>>;
      if (keys.length === 0) return 'No account API keys.';
      return keys
        .map((k) => {
          const status = k.revokedAt ? `revoked ${k.revokedAt}` : k.expiresAt && k.expiresAt <= new Date().toISOString() ? 'expired' : 'active';
          const exposure = k.browserExposure ? `  WARNING: used from a browser at ${k.browserExposure.origin}` : '';
          return `${k.id}  ${k.hint}  ${k.environment}  "${k.label}"  ${status}  last used ${k.lastUsedAt ?? 'never'}${exposure}`;
        })
        .join('\n');
    },
  },
};
