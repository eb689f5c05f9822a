/**
 * The environment, parsed and checked once at start-up (CONTRACT 5). A bad value stops start-up with
 * one line naming the variable.
 */

import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { hostEntry } from './primitives/host-names.js';
import { type DatabaseLocation, parseDatabaseUrl } from './store/store.js';

export const DEFAULT_DATABASE_URL = 'sqlite:.keyward/keyward.db';
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export interface Config {
  database: DatabaseLocation;
  host: string;
  port: number;
  /** Empty only when KEYWARD_PORT is 0 and no KEYWARD_PUBLIC_URL was given (see serve). */
  publicUrl: string;
  masterKey: Buffer;
  /** Keys still accepted for reading while `keyward master-key rotate` reseals under `masterKey`. */
  oldMasterKeys: Buffer[];
  rateLimitPerMinute: number;
  authFailureLimitPerMinute: number;
  /** Which proxies' X-Forwarded-For to believe for the client address (Fastify's trustProxy). */
  trustProxy: boolean | string[];
  /** How long a call to a provider's token or revocation endpoint may take. */
  providerTimeoutSeconds: number;
  /** Let provider and webhook URLs reach loopback/private addresses over http (development and tests; CONTRACT 3). */
  allowPrivateUrls: boolean;
  /** At most one refresh per credential in this many seconds (CONTRACT 2.6). */
  refreshCooldownSeconds: number;
  /** An OAuth credential not refreshed for this many hours is refreshed in the background; 0 turns that off (CONTRACT 5). */
  backgroundRefreshHours: number;
  /** The gateway's limits (CONTRACT 8.1): the largest request body forwarded, how long a provider may take to start answering, calls in flight per node. */
  proxy: { maxBodyBytes: number; timeoutMs: number; maxInFlight: number };
  /** Static credentials checked longest ago are checked again after this many hours; 0 turns that off (CONTRACT 8.3). */
  verifyHours: number;
  /** Who may use the dashboard's "Create account" (CONTRACT 5). */
  signup: SignupPolicy;
  /** How long audit events are kept; null keeps them forever. */
  auditRetentionDays: number | null;
  /** KEYWARD_SMTP_URL and KEYWARD_MAIL_FROM: where invitations are emailed through and from; null emails nothing (CONTRACT 5). */
  mail: MailSettings | null;
  logLevel: string;
  /**
   * KEYWARD_METRICS_PORT (and KEYWARD_METRICS_HOST, 127.0.0.1 unless given): where the Prometheus
   * listener answers GET /metrics, apart from the API; null (the default) starts none.
   * KEYWARD_METRICS_ALLOWED_HOSTS: the names a scraper may call it by, besides its own addresses.
   */
  metrics: { host: string; port: number; allowedHosts: string[] } | null;
  /** Said once at start-up, after the logger exists (for example: a master key was just made). */
  warnings: string[];
}

export type SignupPolicy = 'first' | 'open' | 'closed';

/** An SMTP server, read from KEYWARD_SMTP_URL: `smtps:` is TLS from the first byte, `smtp:` upgrades with STARTTLS where offered. */
export interface SmtpServer {
  host: string;
  /** Unset: the scheme's usual port (587 for smtp:, 465 for smtps:). */
  port: number | undefined;
  secure: boolean;
  auth: { user: string; pass: string } | undefined;
}

export interface MailSettings {
  smtp: SmtpServer;
  /** The From header of every message: an address, or a name and an address. */
  from: string;
}
const SIGNUP_POLICIES: SignupPolicy[] = ['first', 'open', 'closed'];

/**
 * Start-up cannot go on until the operator changes a setting: one line, naming the variable
 * (`line` when the sentence names it itself, with what else to change).
 */
export class ConfigError extends Error {
  constructor(variable: string, problem: string, line = `${variable}: ${problem}`) {
    super(line);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

function positiveInteger(env: Env, name: string, fallback: number, max: number): number {
  return wholeNumber(env, name, fallback, 1, max);
}

function wholeNumber(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(name, `must be a whole number from ${min} to ${max}, got "${raw}"`);
  }
  return Number(raw);
}

function flag(env: Env, name: string): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '' || raw === 'false') return false;
  if (raw === 'true') return true;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!allowed.includes(raw as T)) throw new ConfigError(name, `must be one of ${allowed.join(', ')}, got "${raw}"`);
  return raw as T;
}

/**
 * `true` (trust every hop) or a comma-separated list of proxy addresses / CIDRs. Unset,
 * the socket's address is the client's: behind a proxy, every client would then share one
 * failed-authentication budget.
 */
function parseTrustProxy(raw: string | undefined): boolean | string[] {
  if (raw === undefined || raw === '' || raw === 'false') return false;
  if (raw === 'true') return true;
  const addresses = raw.split(',').map((a) => a.trim());
  if (addresses.some((a) => !/^[0-9a-fA-F.:]+(\/\d{1,3})?$/.test(a))) {
    throw new ConfigError('KEYWARD_TRUST_PROXY', `must be true, false or a comma-separated list of proxy addresses, got "${raw}"`);
  }
  return addresses;
}

/**
 * An all-zero, repeated or hand-typed key is refused. 32 random bytes hold about 30 distinct values;
 * fewer than 16 happens to a random key with probability about 2^-55, so only a made-up key fails.
 */
const MIN_DISTINCT_KEY_BYTES = 16;

function decodeMasterKey(value: string, origin: string): Buffer {
  const key = Buffer.from(value.trim(), 'base64');
  if (key.length !== 32 || key.toString('base64') !== value.trim()) {
    throw new ConfigError(origin, 'must be 32 bytes in base64 (make one with: openssl rand -base64 32)');
  }
  if (new Set(key).size < MIN_DISTINCT_KEY_BYTES) {
    throw new ConfigError(origin, 'is not a random key (too few distinct bytes); make one with: openssl rand -base64 32');
  }
  return key;
}

/**
 * The embedded default keeps its master key in a file beside the database, made once with mode 0600.
 * PostgreSQL deployments run several nodes, which must share one key: there it has to be given.
 */
function loadMasterKey(env: Env, database: DatabaseLocation, warnings: string[]): Buffer {
  const given = env.KEYWARD_MASTER_KEY;
  if (given) return decodeMasterKey(given, 'KEYWARD_MASTER_KEY');
  if (database.engine === 'postgres') {
    throw new ConfigError('KEYWARD_MASTER_KEY', 'is required with PostgreSQL (32 bytes, base64)');
  }
  const file = join(dirname(database.target), 'master.key');
  if (existsSync(file)) return decodeMasterKey(readFileSync(file, 'utf8'), file);
  // A new key beside existing data could open none of it: the file was lost, not never made.
  if (existsSync(database.target)) {
    throw new ConfigError(
      'KEYWARD_MASTER_KEY',
      `${file} is missing but the database ${database.target} exists: restore the key file from your backup, or set KEYWARD_MASTER_KEY to the key its data was sealed with`,
    );
  }
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600, flag: 'wx' });
  chmodSync(file, 0o600);
  warnings.push(`made a new master key at ${file}: back it up, every stored credential is encrypted with it; set KEYWARD_MASTER_KEY to manage it yourself`);
  return decodeMasterKey(readFileSync(file, 'utf8'), file);
}

/**
 * The metrics listener's address, or null when KEYWARD_METRICS_PORT is unset. Port 0 asks for any free
 * port. The host is loopback unless KEYWARD_METRICS_HOST says otherwise, not KEYWARD_HOST: an API
 * listening on 0.0.0.0 must not take its metrics to every interface with it.
 */
function metricsListener(env: Env, apiPort: number): Config['metrics'] {
  const raw = env.KEYWARD_METRICS_PORT;
  if (raw === undefined || raw === '') {
    for (const name of ['KEYWARD_METRICS_HOST', 'KEYWARD_METRICS_ALLOWED_HOSTS']) {
      if (env[name]) throw new ConfigError(name, 'is set but KEYWARD_METRICS_PORT is not: set the port to start the metrics listener');
    }
    return null;
  }
  const port = wholeNumber(env, 'KEYWARD_METRICS_PORT', 0, 0, 65535);
  if (port !== 0 && port === apiPort) {
    throw new ConfigError('KEYWARD_METRICS_PORT', `must differ from KEYWARD_PORT (${apiPort}): metrics have a listener of their own, never the API's`);
  }
  return { host: env.KEYWARD_METRICS_HOST || '127.0.0.1', port, allowedHosts: metricsAllowedHosts(env.KEYWARD_METRICS_ALLOWED_HOSTS) };
}

/** KEYWARD_METRICS_ALLOWED_HOSTS: comma-separated host names (or addresses), without scheme or port. */
function metricsAllowedHosts(raw: string | undefined): string[] {
  const entries = (raw ?? '').split(',').filter((entry) => entry.trim() !== '');
  return entries.map((entry) => {
    const host = hostEntry(entry);
    if (host === null) {
      throw new ConfigError(
        'KEYWARD_METRICS_ALLOWED_HOSTS',
        `must be comma-separated host names such as metrics.internal (no scheme, no port), got "${entry.trim()}"`,
      );
    }
    return host;
  });
}

const SMTP_URL_FORM = 'must be smtp://[user:password@]host[:port] or smtps://[user:password@]host[:port]';
// An address, or a display name then the address in angle brackets; never a line break (a header of its own).
const MAIL_FROM = /^(?:[^\s@<>]+@[^\s@<>]+|[^<>\r\n]*<[^\s@<>]+@[^\s@<>]+>)$/;

/**
 * KEYWARD_SMTP_URL and KEYWARD_MAIL_FROM, both or neither. The URL's value is never printed: it may
 * hold the SMTP password. Only the server, its port and its credentials are read from it: a path, a
 * query or a fragment is refused rather than silently ignored.
 */
function mailSettings(env: Env): MailSettings | null {
  const raw = env.KEYWARD_SMTP_URL;
  const from = env.KEYWARD_MAIL_FROM?.trim();
  if (!raw) {
    if (from) throw new ConfigError('KEYWARD_MAIL_FROM', 'is set but KEYWARD_SMTP_URL is not: set the SMTP server to email invitations');
    return null;
  }
  const refused = new ConfigError('KEYWARD_SMTP_URL', `${SMTP_URL_FORM} (the value is not shown: it may hold a password)`);
  let url: URL;
  let auth: SmtpServer['auth'];
  try {
    url = new URL(raw);
    auth = url.username || url.password ? { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } : undefined;
  } catch {
    throw refused;
  }
  if ((url.protocol !== 'smtp:' && url.protocol !== 'smtps:') || !url.hostname || !['', '/'].includes(url.pathname) || url.search || url.hash) throw refused;
  if (!from) {
    throw new ConfigError('KEYWARD_MAIL_FROM', 'is required with KEYWARD_SMTP_URL: the address invitations come from, such as "Keyward <keyward@example.com>"');
  }
  if (!MAIL_FROM.test(from)) {
    throw new ConfigError('KEYWARD_MAIL_FROM', `must be an email address, or a name and an address such as "Keyward <keyward@example.com>", got "${from}"`);
  }
  return {
    // An IPv6 address comes in brackets in a URL, and without them to a socket.
    smtp: { host: url.hostname.replace(/^\[(.*)\]$/, '$1'), port: url.port ? Number(url.port) : undefined, secure: url.protocol === 'smtps:', auth },
    from,
  };
}

function checkPublicUrl(publicUrl: string): void {
  let protocol = '';
  try {
    protocol = new URL(publicUrl).protocol;
  } catch {
    // Reported below with the other unusable values.
  }
  if (protocol !== 'http:' && protocol !== 'https:') {
    throw new ConfigError('KEYWARD_PUBLIC_URL', `must be an http(s) URL, got "${publicUrl}"`);
  }
}

export function loadConfig(env: Env = process.env): Config {
  const warnings: string[] = [];
  const databaseUrl = env.KEYWARD_DATABASE_URL || DEFAULT_DATABASE_URL;
  const database = parseDatabaseUrl(databaseUrl);
  if (!database) {
    throw new ConfigError('KEYWARD_DATABASE_URL', 'must be sqlite:<path> or postgres://… (the value is not shown: it may hold a password)');
  }
  const host = env.KEYWARD_HOST || '127.0.0.1';
  const port = env.KEYWARD_PORT === '0' ? 0 : positiveInteger(env, 'KEYWARD_PORT', 4000, 65535);
  // With port 0 the real port is known only once listening; serve fills the default in then.
  const publicUrl = (env.KEYWARD_PUBLIC_URL || (port === 0 ? '' : `http://localhost:${port}`)).replace(/\/+$/, '');
  if (publicUrl) checkPublicUrl(publicUrl);
  const logLevel = env.KEYWARD_LOG_LEVEL || 'info';
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError('KEYWARD_LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }
  return {
    database,
    host,
    port,
    publicUrl,
    masterKey: loadMasterKey(env, database, warnings),
    oldMasterKeys: (env.KEYWARD_OLD_MASTER_KEYS ?? '')
      .split(',')
      .map((k) => k.trim())
      .filter(Boolean)
      .map((k) => decodeMasterKey(k, 'KEYWARD_OLD_MASTER_KEYS')),
    rateLimitPerMinute: positiveInteger(env, 'KEYWARD_RATE_LIMIT_PER_MINUTE', 6000, 10_000_000),
    authFailureLimitPerMinute: positiveInteger(env, 'KEYWARD_AUTH_FAILURE_LIMIT_PER_MINUTE', 60, 10_000_000),
    trustProxy: parseTrustProxy(env.KEYWARD_TRUST_PROXY),
    providerTimeoutSeconds: positiveInteger(env, 'KEYWARD_PROVIDER_TIMEOUT_SECONDS', 10, 120),
    allowPrivateUrls: flag(env, 'KEYWARD_ALLOW_PRIVATE_URLS'),
    refreshCooldownSeconds: wholeNumber(env, 'KEYWARD_REFRESH_COOLDOWN_SECONDS', 30, 0, 3600),
    backgroundRefreshHours: wholeNumber(env, 'KEYWARD_BACKGROUND_REFRESH_HOURS', 24, 0, 8760),
    proxy: {
      maxBodyBytes: positiveInteger(env, 'KEYWARD_PROXY_MAX_BODY_MB', 10, 1024) * 1024 * 1024,
      timeoutMs: positiveInteger(env, 'KEYWARD_PROXY_TIMEOUT_SECONDS', 30, 600) * 1000,
      maxInFlight: positiveInteger(env, 'KEYWARD_PROXY_MAX_IN_FLIGHT', 256, 100_000),
    },
    verifyHours: wholeNumber(env, 'KEYWARD_VERIFY_HOURS', 24, 0, 8760),
    signup: oneOf(env, 'KEYWARD_SIGNUP', SIGNUP_POLICIES, 'first'),
    auditRetentionDays: env.KEYWARD_AUDIT_RETENTION_DAYS ? positiveInteger(env, 'KEYWARD_AUDIT_RETENTION_DAYS', 0, 36_500) : null,
    mail: mailSettings(env),
    logLevel,
    metrics: metricsListener(env, port),
    warnings,
  };
}
