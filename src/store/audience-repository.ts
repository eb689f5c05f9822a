/** The audience of business-mode servers (audience_members) and their credentials. */
import { preparedQuery } from './prepared.js';
import { Repository } from './repository.js';
import type { Connections } from './connections.js';

export class AudienceRepository extends Repository {
  readonly #memberByExternalId;
  readonly #credentialsOfMember;

  constructor(connections: Connections) {
    super(connections);
    const { root, reader } = connections;
    this.#memberByExternalId = preparedQuery(reader, 2, (serverId: string, externalUserId: string) =>
      root
        .selectFrom('audience_members')
        .select(['id', 'created_at', 'updated_at'])
        .where('server_id', '=', serverId)
        .where('external_user_id', '=', externalUserId),
    );
    this.#credentialsOfMember = preparedQuery(reader, 1, (memberId: string) =>
      root.selectFrom('credentials').selectAll().where('member_id', '=', memberId).orderBy('provider'),
    );
  }

  /** The member read of GET /v1/end-users/{id}: on the per-request reader (see Connections.reader). */
  async memberByExternalId(serverId: string, externalUserId: string) {
    const [row] = await this.#memberByExternalId(serverId, externalUserId);
    return row;
  }

  credentialsOfMember(memberId: string) {
    return this.#credentialsOfMember(memberId);
  }
}
