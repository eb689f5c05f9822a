/**
 * The reads every authenticated request makes, prepared once per store (see prepared.ts): the two
 * key lookups of the guard and the member read of GET /v1/end-users/{id}. `run` is where they run:
 * on SQLite a read-only connection of their own, so they never queue behind a write transaction.
 */
import type { Kysely } from 'kysely';
import { preparedQuery, type QueryRunner } from './prepared.js';
import type { Database } from './schema.js';

export function hotQueries(db: Kysely<Database>, run: QueryRunner) {
  return {
    accountKeyByDigest: preparedQuery(run, 1, (digest: string) =>
      db
        .selectFrom('account_keys')
        .select(['id', 'account_id', 'hint', 'revoked_at', 'expires_at', 'last_used_at'])
        .where('digest', '=', digest),
    ),
    serverKeyByDigest: preparedQuery(run, 1, (digest: string) =>
      db
        .selectFrom('server_keys')
        .innerJoin('servers', 'servers.id', 'server_keys.server_id')
        .select(['server_keys.id', 'server_keys.hint', 'server_keys.expires_at', 'servers.id as server_id', 'servers.account_id', 'servers.mode'])
        .where('server_keys.digest', '=', digest),
    ),
    memberByExternalId: preparedQuery(run, 2, (serverId: string, externalUserId: string) =>
      db
        .selectFrom('audience_members')
        .select(['id', 'created_at', 'updated_at'])
        .where('server_id', '=', serverId)
        .where('external_user_id', '=', externalUserId),
    ),
    credentialsOfMember: preparedQuery(run, 1, (memberId: string) =>
      db.selectFrom('credentials').selectAll().where('member_id', '=', memberId).orderBy('provider'),
    ),
  };
}

export type HotQueries = ReturnType<typeof hotQueries>;
