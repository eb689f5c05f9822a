/** Account API keys and server API keys, and the per-request key lookups of the management guard. */
import { preparedQuery } from './prepared.js';
import { Repository } from './repository.js';
import type { Connections } from './connections.js';

export class KeysRepository extends Repository {
  readonly #accountKeyByDigest;
  readonly #serverKeyByDigest;

  constructor(connections: Connections) {
    super(connections);
    const { root, reader } = connections;
    this.#accountKeyByDigest = preparedQuery(reader, 1, (digest: string) =>
      root
        .selectFrom('account_keys')
        .select(['id', 'account_id', 'hint', 'revoked_at', 'expires_at', 'last_used_at'])
        .where('digest', '=', digest),
    );
    this.#serverKeyByDigest = preparedQuery(reader, 1, (digest: string) =>
      root
        .selectFrom('server_keys')
        .innerJoin('servers', 'servers.id', 'server_keys.server_id')
        .select(['server_keys.id', 'server_keys.hint', 'server_keys.expires_at', 'servers.id as server_id', 'servers.account_id', 'servers.mode'])
        .where('server_keys.digest', '=', digest),
    );
  }

  async accountKeyByDigest(digest: string) {
    const [row] = await this.#accountKeyByDigest(digest);
    return row;
  }

  async serverKeyByDigest(digest: string) {
    const [row] = await this.#serverKeyByDigest(digest);
    return row;
  }
}
