import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';

const key = randomBytes(32).toString('base64');

function refusal(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('the configuration was accepted');
}

describe('configuration (CONTRACT 5)', () => {
  it('has the documented defaults', () => {
    const dir = mkdtempSync(join(tmpdir(), 'keyward-config-'));
    const config = loadConfig({ KEYWARD_DATABASE_URL: `sqlite:${dir}/keyward.db`, KEYWARD_MASTER_KEY: key });
    expect(config).toMatchObject({ host: '127.0.0.1', port: 4000, publicUrl: 'http://localhost:4000', rateLimitPerMinute: 6000, logLevel: 'info' });
    expect(config.authFailureLimitPerMinute).toBe(60);
    expect(config.trustProxy).toBe(false);
    expect(config.metrics).toBeNull();
  });

  it('makes the embedded master key once, mode 0600, beside the database', () => {
    const dir = mkdtempSync(join(tmpdir(), 'keyward-config-'));
    const env = { KEYWARD_DATABASE_URL: `sqlite:${dir}/keyward.db` };
    const first = loadConfig(env);
    expect(first.warnings.join(' ')).toContain('master key');
    const file = join(dir, 'master.key');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(Buffer.from(readFileSync(file, 'utf8'), 'base64')).toEqual(first.masterKey);
    const second = loadConfig(env);
    expect(second.masterKey).toEqual(first.masterKey);
    expect(second.warnings).toEqual([]);
  });

  it('makes no new key beside an existing database whose key file was lost', () => {
    const dir = mkdtempSync(join(tmpdir(), 'keyward-config-'));
    const env = { KEYWARD_DATABASE_URL: `sqlite:${dir}/keyward.db` };
    loadConfig(env);
    writeFileSync(join(dir, 'keyward.db'), '');
    rmSync(join(dir, 'master.key'));
    expect(refusal(env)).toMatch(/^KEYWARD_MASTER_KEY: .*master\.key is missing but the database .* exists/);
    expect(existsSync(join(dir, 'master.key'))).toBe(false);
  });

  it('reads which proxies to trust for the client address', () => {
    const base = { KEYWARD_DATABASE_URL: 'postgres://db.internal/keyward', KEYWARD_MASTER_KEY: key };
    expect(loadConfig({ ...base, KEYWARD_TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ ...base, KEYWARD_TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' }).trustProxy).toEqual(['10.0.0.0/8', '127.0.0.1']);
  });

  it('reads the background refresh period in whole hours, 24 by default and 0 for off', () => {
    const base = { KEYWARD_DATABASE_URL: 'postgres://db.internal/keyward', KEYWARD_MASTER_KEY: key };
    expect(loadConfig(base).backgroundRefreshHours).toBe(24);
    expect(loadConfig({ ...base, KEYWARD_BACKGROUND_REFRESH_HOURS: '' }).backgroundRefreshHours).toBe(24);
    for (const hours of [0, 1, 8760]) expect(loadConfig({ ...base, KEYWARD_BACKGROUND_REFRESH_HOURS: String(hours) }).backgroundRefreshHours).toBe(hours);
    for (const bad of ['8761', '-1', '1.5', '24h', 'daily', ' 24']) {
      expect(refusal({ ...base, KEYWARD_BACKGROUND_REFRESH_HOURS: bad })).toBe(
        `KEYWARD_BACKGROUND_REFRESH_HOURS: must be a whole number from 0 to 8760, got "${bad}"`,
      );
    }
  });

  it("reads the gateway's limits and the background check's period, with the contract's defaults", () => {
    const base = { KEYWARD_DATABASE_URL: 'postgres://db.internal/keyward', KEYWARD_MASTER_KEY: key };
    expect(loadConfig(base).proxy).toEqual({ maxBodyBytes: 10 * 1024 * 1024, timeoutMs: 30_000, maxInFlight: 256 });
    expect(loadConfig(base).verifyHours).toBe(24);
    const set = loadConfig({
      ...base,
      KEYWARD_PROXY_MAX_BODY_MB: '1',
      KEYWARD_PROXY_TIMEOUT_SECONDS: '2',
      KEYWARD_PROXY_MAX_IN_FLIGHT: '3',
      KEYWARD_VERIFY_HOURS: '0',
    });
    expect(set.proxy).toEqual({ maxBodyBytes: 1024 * 1024, timeoutMs: 2000, maxInFlight: 3 });
    expect(set.verifyHours).toBe(0);
    expect(refusal({ ...base, KEYWARD_PROXY_MAX_BODY_MB: '0' })).toBe('KEYWARD_PROXY_MAX_BODY_MB: must be a whole number from 1 to 1024, got "0"');
    expect(refusal({ ...base, KEYWARD_PROXY_TIMEOUT_SECONDS: '30s' })).toBe('KEYWARD_PROXY_TIMEOUT_SECONDS: must be a whole number from 1 to 600, got "30s"');
    expect(refusal({ ...base, KEYWARD_PROXY_MAX_IN_FLIGHT: '-1' })).toBe('KEYWARD_PROXY_MAX_IN_FLIGHT: must be a whole number from 1 to 100000, got "-1"');
    expect(refusal({ ...base, KEYWARD_VERIFY_HOURS: '8761' })).toBe('KEYWARD_VERIFY_HOURS: must be a whole number from 0 to 8760, got "8761"');
  });

  it('starts no metrics listener unless KEYWARD_METRICS_PORT is set, and puts it on loopback unless told, wherever the API listens', () => {
    // The API on every interface: the metrics stay on 127.0.0.1 all the same.
    const base = { KEYWARD_DATABASE_URL: 'postgres://db.internal/keyward', KEYWARD_MASTER_KEY: key, KEYWARD_HOST: '0.0.0.0' };
    expect(loadConfig(base).host).toBe('0.0.0.0');
    expect(loadConfig(base).metrics).toBeNull();
    expect(loadConfig({ ...base, KEYWARD_METRICS_PORT: '' }).metrics).toBeNull();
    expect(loadConfig({ ...base, KEYWARD_METRICS_PORT: '9464' }).metrics).toEqual({ host: '127.0.0.1', port: 9464, allowedHosts: [] });
    expect(loadConfig({ ...base, KEYWARD_HOST: '10.0.0.7', KEYWARD_METRICS_PORT: '9464' }).metrics).toEqual({
      host: '127.0.0.1',
      port: 9464,
      allowedHosts: [],
    });
    expect(loadConfig({ ...base, KEYWARD_METRICS_PORT: '9464', KEYWARD_METRICS_HOST: '10.0.0.5' }).metrics).toEqual({
      host: '10.0.0.5',
      port: 9464,
      allowedHosts: [],
    });
    expect(loadConfig({ ...base, KEYWARD_METRICS_PORT: '9464', KEYWARD_METRICS_HOST: '0.0.0.0' }).metrics).toEqual({
      host: '0.0.0.0',
      port: 9464,
      allowedHosts: [],
    });
    expect(loadConfig({ ...base, KEYWARD_METRICS_PORT: '0' }).metrics).toEqual({ host: '127.0.0.1', port: 0, allowedHosts: [] });
    // Both on any free port: they still get two different ports.
    expect(loadConfig({ ...base, KEYWARD_PORT: '0', KEYWARD_METRICS_PORT: '0' }).metrics).toEqual({ host: '127.0.0.1', port: 0, allowedHosts: [] });
    for (const bad of ['65536', '-1', '9464.5', 'metrics', ' 9464']) {
      expect(refusal({ ...base, KEYWARD_METRICS_PORT: bad })).toBe(`KEYWARD_METRICS_PORT: must be a whole number from 0 to 65535, got "${bad}"`);
    }
    expect(refusal({ ...base, KEYWARD_METRICS_PORT: '4000' })).toMatch(/^KEYWARD_METRICS_PORT: must differ from KEYWARD_PORT \(4000\)/);
    expect(refusal({ ...base, KEYWARD_PORT: '8080', KEYWARD_METRICS_PORT: '8080' })).toMatch(/^KEYWARD_METRICS_PORT: must differ from KEYWARD_PORT \(8080\)/);
    expect(refusal({ ...base, KEYWARD_METRICS_HOST: '10.0.0.5' })).toMatch(/^KEYWARD_METRICS_HOST: is set but KEYWARD_METRICS_PORT is not/);
  });

  it('reads KEYWARD_METRICS_ALLOWED_HOSTS as host names to compare, and refuses what is not one', () => {
    const base = { KEYWARD_DATABASE_URL: 'postgres://db.internal/keyward', KEYWARD_MASTER_KEY: key, KEYWARD_METRICS_PORT: '9464' };
    const allowed = (value: string) => loadConfig({ ...base, KEYWARD_METRICS_ALLOWED_HOSTS: value }).metrics?.allowedHosts;
    expect(allowed('')).toEqual([]);
    expect(allowed('Metrics.Internal, keyward-1.svc.cluster.local.,10.0.0.5,::FFFF:10.0.0.6')).toEqual([
      'metrics.internal',
      'keyward-1.svc.cluster.local',
      '10.0.0.5',
      '10.0.0.6',
    ]);
    for (const bad of ['https://metrics.internal', 'metrics.internal:9464', '*.internal', 'a b', '-bad.internal']) {
      expect(refusal({ ...base, KEYWARD_METRICS_ALLOWED_HOSTS: `ok.internal,${bad}` })).toBe(
        `KEYWARD_METRICS_ALLOWED_HOSTS: must be comma-separated host names such as metrics.internal (no scheme, no port), got "${bad}"`,
      );
    }
    const { KEYWARD_METRICS_PORT: _, ...withoutPort } = base;
    expect(refusal({ ...withoutPort, KEYWARD_METRICS_ALLOWED_HOSTS: 'metrics.internal' })).toMatch(
      /^KEYWARD_METRICS_ALLOWED_HOSTS: is set but KEYWARD_METRICS_PORT is not/,
    );
  });

  it('stops on each bad value with one line naming the variable', () => {
    const base = { KEYWARD_DATABASE_URL: 'postgres://db.internal/keyward', KEYWARD_MASTER_KEY: key };
    expect(refusal({ KEYWARD_DATABASE_URL: 'postgres://db.internal/keyward' })).toMatch(/^KEYWARD_MASTER_KEY: .*required/);
    expect(refusal({ ...base, KEYWARD_MASTER_KEY: 'c2hvcnQ=' })).toMatch(/^KEYWARD_MASTER_KEY: must be 32 bytes/);
    expect(refusal({ ...base, KEYWARD_DATABASE_URL: 'mysql://u:hunter2@h/db' })).toMatch(/^KEYWARD_DATABASE_URL: /);
    expect(refusal({ ...base, KEYWARD_DATABASE_URL: 'mysql://u:hunter2@h/db' })).not.toContain('hunter2');
    expect(refusal({ ...base, KEYWARD_PORT: '70000' })).toMatch(/^KEYWARD_PORT: /);
    expect(refusal({ ...base, KEYWARD_PORT: 'eighty' })).toMatch(/^KEYWARD_PORT: /);
    expect(refusal({ ...base, KEYWARD_PUBLIC_URL: 'ftp://x' })).toMatch(/^KEYWARD_PUBLIC_URL: /);
    expect(refusal({ ...base, KEYWARD_RATE_LIMIT_PER_MINUTE: '0' })).toMatch(/^KEYWARD_RATE_LIMIT_PER_MINUTE: /);
    expect(refusal({ ...base, KEYWARD_LOG_LEVEL: 'loud' })).toMatch(/^KEYWARD_LOG_LEVEL: /);
    expect(refusal({ ...base, KEYWARD_TRUST_PROXY: 'the load balancer' })).toMatch(/^KEYWARD_TRUST_PROXY: /);
    for (const message of [refusal({ ...base, KEYWARD_PORT: 'x' }), refusal({ ...base, KEYWARD_LOG_LEVEL: 'x' })]) {
      expect(message.split('\n')).toHaveLength(1);
    }
  });
});
