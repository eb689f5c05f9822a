/** `keyward server …`: an account's servers, their mode, key and allowed redirect URIs. */

import { CLI_ACTOR } from '../services/context.js';
import {
  type AccountServerRow,
  allowRedirectUri,
  createServer,
  listServersOfAccount,
  rotateServerKey,
  SERVER_MODES,
  setSecretsReadable,
  setServerMode,
} from '../services/servers/servers.js';
import { brandCommand } from './brand-command.js';
import { type Command, count, oneOf, optional, SHOWN_ONCE, str, trueOrFalse } from './commands.js';

export const commands: Record<string, Command> = {
  'server create': {
    usage: 'server create --account A --name N [--mode business|personal]',
    options: { account: { type: 'string', required: true }, name: { type: 'string', required: true }, mode: { type: 'string' } },
    run: (ctx, o) =>
      createServer(ctx, {
        accountId: str(o, 'account'),
        name: str(o, 'name'),
        mode: oneOf(o, 'mode', SERVER_MODES) ?? 'business',
        actor: CLI_ACTOR,
      }),
    text: (r) => `Server ${r.serverId} created.\nServer API key (${SHOWN_ONCE}):\n${r.serverKey}`,
  },
  'server mode': {
    usage: 'server mode --server S --mode business|personal',
    options: { server: { type: 'string', required: true }, mode: { type: 'string', required: true } },
    run: (ctx, o) => setServerMode(ctx, str(o, 'server'), oneOf(o, 'mode', SERVER_MODES)!, CLI_ACTOR),
    text: (r) => `Server ${r.serverId} is now in ${r.mode} mode.`,
  },
  'server secrets': {
    usage: 'server secrets --server S --readable true|false',
    options: { server: { type: 'string', required: true }, readable: { type: 'string', required: true } },
    // The contract's output names the setting only, changed or not.
    run: async (ctx, o) => {
      const { serverId, secretsReadable } = await setSecretsReadable(ctx, str(o, 'server'), trueOrFalse(o, 'readable'), CLI_ACTOR);
      return { serverId, secretsReadable };
    },
    text: (r) =>
      r.secretsReadable
        ? `Credentials of ${r.serverId} can be read through the API.`
        : `Server ${r.serverId} is write-only: its credentials are used through the gateway and never read through the API.`,
  },
  'server rotate-key': {
    usage: 'server rotate-key --server S [--grace-seconds N]',
    options: { server: { type: 'string', required: true }, 'grace-seconds': { type: 'string' } },
    run: (ctx, o) => rotateServerKey(ctx, str(o, 'server'), count(optional(o, 'grace-seconds'), 'grace-seconds') ?? 0, CLI_ACTOR),
    text: (r) => `New server API key for ${r.serverId} (${SHOWN_ONCE}):\n${r.serverKey}`,
  },
  'server allow-redirect': {
    usage: 'server allow-redirect --server S --uri U',
    options: { server: { type: 'string', required: true }, uri: { type: 'string', required: true } },
    run: (ctx, o) => allowRedirectUri(ctx, str(o, 'server'), str(o, 'uri'), CLI_ACTOR),
    text: (r) => `Allowed redirect URIs of ${r.serverId}:\n${(r.redirectUris as string[]).join('\n')}`,
  },
  'server brand': brandCommand,
  'server list': {
    usage: 'server list --account A',
    options: { account: { type: 'string', required: true } },
    run: async (ctx, o) => ({ servers: await listServersOfAccount(ctx, str(o, 'account')) }),
    text: (r) => {
      const servers = r.servers as AccountServerRow[];
      if (servers.length === 0) return 'No servers.';
      return servers.map((s) => `${s.id}  "${s.name}"  ${s.mode}  ${s.keyHint ?? 'no key'}  created ${s.createdAt}`).join('\n');
    },
  },
};
