/**
 * What a proxied call reads (AudienceRepository.memberCredentialForProxy) as the services see it, made
 * from its statement's row; and on PostgreSQL the statement that reads the calls asked together.
 */
import { sql } from 'kysely';
import type { Connections } from './connections.js';
import { CREDENTIAL_COLUMNS } from './credentials-repository.js';
import { asText, preparedPerCount } from './prepared.js';
import type { CredentialRow } from './schema.js';
import { StatementsTogether } from './statements-together.js';
import { DatabaseUnavailable } from './store-errors.js';

/**
 * What a proxied call reads (CONTRACT 8.1): the auth version, the member (if any), its credential of
 * the provider (if any) and the server's own definition of that provider (if it is a custom one).
 */
export interface MemberCredentialForProxy {
  authVersion: string;
  member: { id: string; created_at: string; updated_at: string } | undefined;
  credential: CredentialRow | undefined;
  customDefinition: string | null;
}

/** Proxied calls' reads sent in one statement at most on PostgreSQL (statements-together.ts); one statement text per count up to it. */
const PROXY_READS_TOGETHER = 16;

/** A proxied call's arguments: server id, external user id, provider. */
export type ProxyReadArgs = [serverId: string, externalUserId: string, provider: string];

/** The columns of a proxied call's statement beside the credential's. */
export interface ProxyReadRow {
  auth_version: string | number | bigint;
  m_id: string | null;
  m_created_at: string | null;
  m_updated_at: string | null;
  custom_definition: string | null;
}

/** A proxied call's read from its statement's row (the credential's columns are null where it has none). */
export function proxyReadOf(row: ProxyReadRow): MemberCredentialForProxy {
  const { auth_version, m_id, m_created_at, m_updated_at, custom_definition, ...credential } = row as ProxyReadRow & { id: string | null };
  return {
    authVersion: String(auth_version),
    member: memberOf({ m_id, m_created_at, m_updated_at }),
    credential: credential.id === null ? undefined : (credential as unknown as CredentialRow),
    customDefinition: custom_definition ?? null,
  };
}

/**
 * What a read's objects take beside its texts' characters and its bytes: the read, its member, its
 * row of 22 columns, each text's and the secret's own header. Measured at ~1.2 KiB (V8 12, Node 24).
 */
const READ_OBJECTS_BYTES = 1536;

/**
 * About what a read holds in memory, for the bound on reads kept (audience-repository.ts): its objects,
 * each text at two bytes a character (V8 keeps a text with any character past Latin-1 so), and each
 * byte string (the sealed secret) twice: while the read is kept, what the proxy worked out from it
 * (proxy-call.ts, keyed by the read) holds the secret again, opened, as it is sent.
 */
export function proxyReadBytes(read: MemberCredentialForProxy): number {
  let bytes = READ_OBJECTS_BYTES + 2 * (read.authVersion.length + (read.customDefinition?.length ?? 0));
  for (const value of Object.values(read.credential ?? {})) {
    if (typeof value === 'string') bytes += 2 * value.length;
    else if (value instanceof Uint8Array) bytes += 2 * value.byteLength;
  }
  return bytes;
}

/** The member's columns of a member read's row; undefined where the server has no such member. */
export function memberOf(row: { m_id: string | null; m_created_at: string | null; m_updated_at: string | null }): MemberCredentialForProxy['member'] {
  return row.m_id === null ? undefined : { id: row.m_id, created_at: row.m_created_at!, updated_at: row.m_updated_at! };
}

/**
 * On PostgreSQL, the reads of calls that ask together in one statement (statements-together.ts): the
 * proxied call's joins over a VALUES list of the calls' arguments, each numbered so that its row
 * finds its call. A call alone goes as the statement of one call (`readOne`, the repository's). One
 * text per count of calls, built when first needed (its plan, on an audience of 1,000,000: a nested loop from the VALUES over
 * the members', credentials' and custom providers' unique indexes, as the statement of one call's).
 */
export function proxyReadsTogether(
  { root, reader }: Connections,
  readOne: (...args: ProxyReadArgs) => Promise<ProxyReadRow[]>,
): StatementsTogether<ProxyReadArgs, MemberCredentialForProxy> {
  const calls = (args: string[]) => {
    const rows = [];
    for (let i = 0; i < args.length; i += 3) rows.push(sql`(${sql.lit(i / 3)}, ${asText(args[i]!)}, ${asText(args[i + 1]!)}, ${asText(args[i + 2]!)})`);
    return sql<{ n: number; server_id: string; external_user_id: string; provider: string }>`(values ${sql.join(rows)})`.as<'k'>(
      sql`k(n, server_id, external_user_id, provider)`,
    );
  };
  const statementFor = preparedPerCount(
    reader,
    (count) => count * 3,
    (...args: string[]) =>
      root
        .selectFrom(calls(args))
        .innerJoin('auth_version as v', (join) => join.on('v.id', '=', sql.lit(1)))
        .leftJoin('audience_members as m', (join) => join.onRef('m.server_id', '=', 'k.server_id').onRef('m.external_user_id', '=', 'k.external_user_id'))
        .leftJoin('credentials as c', (join) => join.onRef('c.member_id', '=', 'm.id').onRef('c.provider', '=', 'k.provider'))
        .leftJoin('custom_providers as p', (join) => join.onRef('p.server_id', '=', 'm.server_id').onRef('p.slug', '=', 'c.provider'))
        .select([
          'k.n',
          'v.version as auth_version',
          'm.id as m_id',
          'm.created_at as m_created_at',
          'm.updated_at as m_updated_at',
          'p.definition as custom_definition',
        ])
        .select(CREDENTIAL_COLUMNS.map((column) => `c.${column}` as const)),
  );
  return new StatementsTogether<ProxyReadArgs, MemberCredentialForProxy>(
    async (asked) => {
      if (asked.length === 1) return [proxyReadOf((await readOne(...asked[0]!))[0]!)];
      const rows = await statementFor(asked.length)(...asked.flat());
      const reads: (MemberCredentialForProxy | undefined)[] = new Array(asked.length).fill(undefined);
      for (const { n, ...row } of rows) reads[n] = proxyReadOf(row);
      if (reads.includes(undefined)) throw new Error(`a read of ${asked.length} proxied calls found rows for ${rows.length} of them`);
      return reads as MemberCredentialForProxy[];
    },
    PROXY_READS_TOGETHER,
    (error) => !(error instanceof DatabaseUnavailable),
  );
}
