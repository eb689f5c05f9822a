/**
 * The floor of GET /v1/end-users/{externalUserId}: a server that does only the work that read cannot
 * skip, so that Keyward's CPU per request can be judged against it (npm run bench). It imports
 * nothing from src/ on purpose: it is a yardstick, not a second copy of Keyward.
 *
 * Per request, and nothing else:
 * - SHA-256 of both keys (keys are stored as digests only), each digest looked up in a Map filled at
 *   start, and the few comparisons of the guard's steps 9–14 on what was found (revoked, expired,
 *   same account, business mode): any read must prove both keys;
 * - one prepared statement: the auth version's row, the member (its profile too: display name, email,
 *   tags as JSON) and its credentials (better-sqlite3 on
 *   SQLite, one named `pg` query on PostgreSQL), their lastUsedAt as read (Keyward's write of it, once
 *   a minute per credential, is left out: one statement a minute is nothing beside the load). The auth version rides in the same statement, as in
 *   Keyward, because a revocation must be seen at the next request on every node; where it moved the
 *   Maps are filled again;
 * - one AES-256-GCM open with associated data of each sealed credential, in Keyward's stored format
 *   (version 2: version | key id | IV | tag | ciphertext), and the JSON inside parsed. The AES key is
 *   derived from the master key once at start, as Keyward does: nothing is derived per value;
 * - a Fastify response schema of the same fields and types as Keyward's AudienceMemberWithSecrets;
 * - one pino info line per request, to stdout through the same 4 KiB asynchronous buffer as
 *   Keyward's default logger (the bench points stdout at a file).
 *
 * FLOOR_DATABASE_URL (`sqlite:<path>` or a PostgreSQL URL), FLOOR_MASTER_KEY (base64, 32 bytes), PORT.
 */
import { createDecipheriv, createHmac, createSecretKey, hash, hkdfSync } from 'node:crypto';
import BetterSqlite3 from 'better-sqlite3';
import Fastify from 'fastify';
import pg from 'pg';
import pino from 'pino';

const ROUTE = '/v1/end-users/:externalUserId';
const databaseUrl = process.env.FLOOR_DATABASE_URL ?? '';
const masterKey = Buffer.from(process.env.FLOOR_MASTER_KEY ?? '', 'base64');
if (masterKey.length !== 32) throw new Error('FLOOR_MASTER_KEY must be 32 bytes, base64');

// Keyward's sealing key and key id (see its vault): derived once, here.
const keyId = createHmac('sha256', masterKey).update('keyward/master-key-id').digest().subarray(0, 8);
// Held as a KeyObject: the same key the Buffer holds, but createDecipheriv given a Buffer prepares
// the key afresh on every call, which on Node 24 costs several times the decryption itself.
const aesKey = createSecretKey(Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'keyward/aes-256-gcm', 32)));

function open(sealed: Buffer, associatedData: string): string {
  // Version 2 under the one key this process holds; the key id is compared in place, not copied.
  if (sealed[0] !== 2 || sealed.compare(keyId, 0, 8, 1, 9) !== 0) throw new Error('sealed under another key or format');
  const decipher = createDecipheriv('aes-256-gcm', aesKey, sealed.subarray(9, 21));
  decipher.setAAD(Buffer.from(associatedData, 'utf8'));
  decipher.setAuthTag(sealed.subarray(21, 37));
  return decipher.update(sealed.subarray(37), undefined, 'utf8') + decipher.final('utf8');
}

interface AccountKey {
  id: string;
  account_id: string;
  revoked_at: string | null;
  expires_at: string | null;
}
interface ServerKey {
  server_id: string;
  account_id: string;
  mode: string;
  expires_at: string | null;
}
interface MemberRow {
  auth_version: number | string;
  m_id: string | null;
  m_created_at: string | null;
  m_updated_at: string | null;
  m_display_name: string | null;
  m_email: string | null;
  m_tags: string | null;
  id: string | null;
  server_id: string;
  member_id: string;
  provider: string;
  type: 'oauth2' | 'static';
  status: 'active' | 'needs_reauth';
  secret: Buffer;
  access_expires_at: string | null;
  scopes: string | null;
  connected_at: string;
  updated_at: string;
  refreshed_at: string | null;
  last_used_at: string | null;
  last_check_at: string | null;
  last_check_outcome: string | null;
}

const ACCOUNT_KEYS_SQL = 'select digest, id, account_id, revoked_at, expires_at from account_keys';
const SERVER_KEYS_SQL = 'select k.digest, s.id as server_id, s.account_id, s.mode, k.expires_at from server_keys k join servers s on s.id = k.server_id';
const VERSION_SQL = 'select version from auth_version where id = 1';
const memberSql = (p1: string, p2: string) =>
  'select v.version as auth_version, m.id as m_id, m.created_at as m_created_at, m.updated_at as m_updated_at, ' +
  'm.display_name as m_display_name, m.email as m_email, m.tags as m_tags, ' +
  'c.id, c.server_id, c.member_id, c.provider, c.type, c.status, c.secret, c.access_expires_at, c.scopes, c.connected_at, c.updated_at, c.refreshed_at, c.last_used_at, c.last_check_at, c.last_check_outcome ' +
  `from auth_version v left join audience_members m on m.server_id = ${p1} and m.external_user_id = ${p2} ` +
  'left join credentials c on c.member_id = m.id where v.id = 1 order by c.provider';

/** The database side: the keys with the version they were read under, and the member read. */
interface FloorDatabase {
  keys(): Promise<{ version: string; accounts: [string, AccountKey][]; servers: [string, ServerKey][] }>;
  member(serverId: string, externalUserId: string): MemberRow[] | Promise<MemberRow[]>;
}

function sqliteDatabase(path: string): FloorDatabase {
  // Read-only and WAL, as Keyward's per-request reader: Keyward keeps the file open for writing.
  const db = new BetterSqlite3(path, { readonly: true });
  db.pragma('busy_timeout = 5000');
  // Compared through a cast, as Keyward's statement is: a bare `column = ?` makes SQLite re-prepare the
  // statement on every call (store/audience-repository.ts says why), work a floor would not do.
  const member = db.prepare<[string, string], MemberRow>(memberSql('cast(? as text)', 'cast(? as text)'));
  return {
    keys: async () =>
      db.transaction(() => ({
        version: String((db.prepare(VERSION_SQL).get() as { version: number }).version),
        accounts: (db.prepare(ACCOUNT_KEYS_SQL).all() as (AccountKey & { digest: string })[]).map((r) => [r.digest, r] as [string, AccountKey]),
        servers: (db.prepare(SERVER_KEYS_SQL).all() as (ServerKey & { digest: string })[]).map((r) => [r.digest, r] as [string, ServerKey]),
      }))(),
    member: function readMemberSqlite(serverId, externalUserId) {
      return member.all(serverId, externalUserId);
    },
  };
}

function postgresDatabase(connectionString: string): FloorDatabase {
  const pool = new pg.Pool({ connectionString, max: 10 });
  // Named: parsed and planned once per connection, then only bound and run.
  const member = { name: 'floor-member', text: memberSql('$1', '$2') };
  return {
    keys: async () => {
      const client = await pool.connect();
      try {
        await client.query('begin isolation level repeatable read');
        const version = String((await client.query(VERSION_SQL)).rows[0].version);
        const accounts = (await client.query(ACCOUNT_KEYS_SQL)).rows.map((r) => [r.digest, r] as [string, AccountKey]);
        const servers = (await client.query(SERVER_KEYS_SQL)).rows.map((r) => [r.digest, r] as [string, ServerKey]);
        await client.query('commit');
        return { version, accounts, servers };
      } finally {
        client.release();
      }
    },
    member: async function readMemberPostgres(serverId, externalUserId) {
      return (await pool.query<MemberRow>({ ...member, values: [serverId, externalUserId] })).rows;
    },
  };
}

const database = databaseUrl.startsWith('sqlite:') ? sqliteDatabase(databaseUrl.slice('sqlite:'.length)) : postgresDatabase(databaseUrl);

let version = '';
let accountKeys = new Map<string, AccountKey>();
let serverKeys = new Map<string, ServerKey>();
async function fillKeys(): Promise<void> {
  const read = await database.keys();
  version = read.version;
  accountKeys = new Map(read.accounts);
  serverKeys = new Map(read.servers);
}
await fillKeys();

/** The server the two keys open, or null (the floor does not tell refusals apart). */
function judge(authorization: string | undefined, serviceKey: string | string[] | undefined, now: string): string | null {
  if (typeof authorization !== 'string' || !authorization.startsWith('Bearer ') || typeof serviceKey !== 'string') return null;
  const account = accountKeys.get(hash('sha256', authorization.slice(7), 'hex'));
  if (!account || account.revoked_at || (account.expires_at && account.expires_at <= now)) return null;
  const server = serverKeys.get(hash('sha256', serviceKey, 'hex'));
  if (!server || (server.expires_at && server.expires_at <= now) || server.account_id !== account.account_id || server.mode !== 'business') return null;
  return server.server_id;
}

const nullableTimestamp = { type: ['string', 'null'] };
const credentialSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    provider: { type: 'string' },
    type: { type: 'string', enum: ['oauth2', 'static'] },
    status: { type: 'string', enum: ['active', 'needs_reauth'] },
    connectedAt: { type: 'string' },
    updatedAt: { type: 'string' },
    lastUsedAt: nullableTimestamp,
    lastCheck: { type: ['object', 'null'], properties: { at: { type: 'string' }, outcome: { type: 'string' } } },
    values: { type: 'object', additionalProperties: { type: 'string' } },
    accessToken: { type: 'string' },
    tokenType: { type: 'string' },
    expiresAt: nullableTimestamp,
    scopes: { type: 'array', items: { type: 'string' } },
    refreshedAt: nullableTimestamp,
    error: { type: 'object', properties: { code: { type: 'string' }, message: { type: 'string' }, retryable: { type: 'boolean' } } },
  },
};
const memberSchema = {
  type: 'object',
  properties: {
    externalUserId: { type: 'string' },
    createdAt: { type: 'string' },
    updatedAt: { type: 'string' },
    displayName: { type: ['string', 'null'] },
    email: { type: ['string', 'null'] },
    tags: { type: 'object', additionalProperties: { type: 'string' } },
    credentials: { type: 'array', items: credentialSchema },
  },
};

/** The last check, as stored beside the credential (null where never checked). */
function lastCheck(row: MemberRow) {
  return row.last_check_at !== null && row.last_check_outcome !== null ? { at: row.last_check_at, outcome: row.last_check_outcome } : null;
}

/** One credential as answered, built as one literal (a spread of a base object costs more in the serializer). */
function credential(row: MemberRow) {
  const secret = JSON.parse(open(row.secret, `credentials|${row.id}|${row.server_id}|${row.member_id}`));
  if (secret.type === 'static') {
    return {
      id: row.id,
      provider: row.provider,
      type: row.type,
      status: row.status,
      connectedAt: row.connected_at,
      updatedAt: row.updated_at,
      lastUsedAt: row.last_used_at,
      lastCheck: lastCheck(row),
      values: secret.values,
    };
  }
  const active = row.status === 'active';
  return {
    id: row.id,
    provider: row.provider,
    type: row.type,
    status: row.status,
    connectedAt: row.connected_at,
    updatedAt: row.updated_at,
    lastUsedAt: row.last_used_at,
    lastCheck: lastCheck(row),
    expiresAt: row.access_expires_at,
    scopes: row.scopes ? JSON.parse(row.scopes) : [],
    refreshedAt: row.refreshed_at,
    accessToken: active ? secret.accessToken : undefined,
    tokenType: active ? secret.tokenType : undefined,
  };
}

const log = pino({ level: 'info', base: { service: 'floor' } }, pino.destination({ dest: 1, sync: false, minLength: 4096 }));
const app = Fastify({ routerOptions: { maxParamLength: 4096 } });

app.addHook('onResponse', function logLine(request, reply, done) {
  log.info({ reqId: request.id, method: request.method, route: ROUTE, statusCode: reply.statusCode, ms: Math.round(reply.elapsedTime) }, 'request');
  done();
});

app.get('/ready', async () => 'ready');
app.get<{ Params: { externalUserId: string } }>(ROUTE, { schema: { response: { 200: memberSchema } } }, async function readEndUser(request, reply) {
  const now = new Date().toISOString();
  const serverId = judge(request.headers.authorization, request.headers['x-service-key'], now);
  if (serverId === null) return reply.code(401).send({ code: 'unauthorized' });
  const { externalUserId } = request.params;
  let rows = await database.member(serverId, externalUserId);
  if (String(rows[0]!.auth_version) !== version) {
    // A key, server key or server changed: judge again on keys read afresh, then read again.
    await fillKeys();
    if (judge(request.headers.authorization, request.headers['x-service-key'], now) !== serverId) return reply.code(401).send({ code: 'unauthorized' });
    rows = await database.member(serverId, externalUserId);
  }
  const first = rows[0]!;
  if (first.m_id === null) return reply.code(404).send({ code: 'end_user_not_found' });
  return {
    externalUserId,
    createdAt: first.m_created_at,
    updatedAt: first.m_updated_at,
    displayName: first.m_display_name,
    email: first.m_email,
    tags: first.m_tags === null ? {} : JSON.parse(first.m_tags),
    credentials: first.id === null ? [] : rows.map(credential),
  };
});

// A clean exit on SIGTERM, so that --cpu-prof writes its profile (the default action would not).
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 4002) });
