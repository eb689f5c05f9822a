/**
 * The store: one repository per table group, all on one set of connections. Services reach the
 * database only through these (test/store/layering.test.ts checks that nothing outside store/ builds
 * a query).
 */
import type { Kysely } from 'kysely';
import { AccountsRepository } from './accounts-repository.js';
import { AudienceRepository } from './audience-repository.js';
import { AuditRepository } from './audit-repository.js';
import { AuthLookups } from './auth-lookups.js';
import { BrandingRepository } from './branding-repository.js';
import { ConnectSessionsRepository } from './connect-sessions-repository.js';
import type { Engine } from './connections.js';
import { CredentialsRepository } from './credentials-repository.js';
import { ExpiryNoticesRepository } from './expiry-notices-repository.js';
import { FlowsRepository } from './flows-repository.js';
import { InstanceSecretsRepository } from './instance-secrets-repository.js';
import { JobsRepository } from './jobs-repository.js';
import { KeysRepository } from './keys-repository.js';
import { MaintenanceRepository } from './maintenance-repository.js';
import { MasterKeysRepository } from './master-keys-repository.js';
import { MfaRepository } from './mfa-repository.js';
import { type ConnectionFigures, type DatabaseLocation, openConnections } from './open.js';
import { ProvidersRepository } from './providers-repository.js';
import { RateLimitsRepository } from './rate-limits-repository.js';
import type { Database } from './schema.js';
import { ServersRepository } from './servers-repository.js';
import { SessionsRepository } from './sessions-repository.js';
import { SsoRepository } from './sso-repository.js';
import { TeamRepository } from './team-repository.js';
import { WebhookDeliveryRepository } from './webhook-delivery-repository.js';
import { WebhooksRepository } from './webhooks-repository.js';

export type { Engine } from './connections.js';
export { type ConnectionFigures, type DatabaseLocation, parseDatabaseUrl } from './open.js';

export interface Store {
  engine: Engine;
  /**
   * Runs fn in one transaction: every repository call inside it, however deeply nested, runs on it
   * (a call inside one already open joins it).
   */
  transaction<T>(fn: () => Promise<T>): Promise<T>;
  accounts: AccountsRepository;
  sessions: SessionsRepository;
  /** An account's team: roles, removals, invitations. */
  team: TeamRepository;
  /** One-time codes: users' TOTP secrets and recovery codes, and the account's "Require MFA". */
  mfa: MfaRepository;
  /** An account's single sign-on: its OpenID Connect provider, its policy, its users' subjects. */
  sso: SsoRepository;
  keys: KeysRepository;
  /** The management guard's per-request reads. */
  authLookups: AuthLookups;
  servers: ServersRepository;
  /** Servers' branding (display name, accent colour, logo): the end users' pages. */
  branding: BrandingRepository;
  providers: ProvidersRepository;
  /** Business-mode servers' end users: their member rows, profiles and list pages, and the reads of a member with its credentials. */
  audience: AudienceRepository;
  /** The audience's credentials: their rows, uses, checks and refresh leases. */
  credentials: CredentialsRepository;
  flows: FlowsRepository;
  /** Connect sessions (CONTRACT 10): the Connect page's links and the flows their pages started. */
  connectSessions: ConnectSessionsRepository;
  audit: AuditRepository;
  masterKeys: MasterKeysRepository;
  /** The installation's own random secrets, sealed (services/sealing/instance-secrets.ts). */
  instanceSecrets: InstanceSecretsRepository;
  maintenance: MaintenanceRepository;
  rateLimits: RateLimitsRepository;
  webhooks: WebhooksRepository;
  /** The outbox's delivery protocol: due endpoints, claims, outcomes (the dispatcher's alone). */
  webhookDelivery: WebhookDeliveryRepository;
  /** Background jobs' leases, and the credentials the background refresh picks. */
  jobs: JobsRepository;
  /** The expiry notices' reads of expired flows and forms, and their guarded marks. */
  expiryNotices: ExpiryNoticesRepository;
  /** The query builder on the root connection, for migrations, tests and benchmarks: never used by src/ outside store/. */
  db: Kysely<Database>;
  /** How busy the connections are now (for metrics; cheap: no query). */
  connectionFigures(): ConnectionFigures;
  close(): Promise<void>;
}

export function openStore(location: DatabaseLocation): Store {
  const { connections, figures, close } = openConnections(location);
  return {
    engine: connections.engine,
    transaction: (fn) => connections.transaction(fn),
    accounts: new AccountsRepository(connections),
    sessions: new SessionsRepository(connections),
    team: new TeamRepository(connections),
    mfa: new MfaRepository(connections),
    sso: new SsoRepository(connections),
    keys: new KeysRepository(connections),
    authLookups: new AuthLookups(connections),
    servers: new ServersRepository(connections),
    branding: new BrandingRepository(connections),
    providers: new ProvidersRepository(connections),
    audience: new AudienceRepository(connections),
    credentials: new CredentialsRepository(connections),
    flows: new FlowsRepository(connections),
    connectSessions: new ConnectSessionsRepository(connections),
    audit: new AuditRepository(connections),
    masterKeys: new MasterKeysRepository(connections),
    instanceSecrets: new InstanceSecretsRepository(connections),
    maintenance: new MaintenanceRepository(connections),
    rateLimits: new RateLimitsRepository(connections),
    webhooks: new WebhooksRepository(connections),
    webhookDelivery: new WebhookDeliveryRepository(connections),
    jobs: new JobsRepository(connections),
    expiryNotices: new ExpiryNoticesRepository(connections),
    db: connections.root,
    connectionFigures: figures,
    close,
  };
}
