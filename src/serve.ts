/** `keyward serve`: config → store → app → listen, and a clean stop on SIGINT / SIGTERM. */

import { buildApp } from './app.js';
import { type Config, ConfigError } from './config.js';
import { scheduleBackgroundRefresh } from './jobs/background-refresh-schedule.js';
import { scheduleCredentialChecks } from './jobs/credential-checks-schedule.js';
import { scheduleExpiryNotices } from './jobs/expiry-notices-schedule.js';
import { scheduleSweeps } from './jobs/sweep-schedule.js';
import { startWebhookDispatch } from './jobs/webhook-dispatch.js';
import { Metrics } from './metrics/metrics.js';
import { type MetricsServer, startMetricsServer } from './metrics/metrics-server.js';
import { createLogger } from './primitives/logger.js';
import { openContext } from './runtime.js';
import { standardSweeps } from './services/retention/sweeps.js';

const LOG_FLUSH_INTERVAL_MS = 1000;

/**
 * Why the API could not listen, as the one line an operator acts on, naming what to change (the
 * variable, and serve's flag); an error Node does not explain this way is passed on as it is.
 */
function listenError(error: NodeJS.ErrnoException, config: Config): Error {
  const where = `port ${config.port} on ${config.host}`;
  switch (error.code) {
    case 'EADDRINUSE':
      return new ConfigError('KEYWARD_PORT', `${where} is in use`, `${where} is in use; set KEYWARD_PORT or --port`);
    case 'EACCES':
      return new ConfigError(
        'KEYWARD_PORT',
        `${where} needs privileges`,
        `${where} needs privileges this process does not have; set KEYWARD_PORT or --port (1024 or above)`,
      );
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new ConfigError(
        'KEYWARD_HOST',
        `${config.host} is not an address here`,
        `${config.host} is not an address of this machine; set KEYWARD_HOST or --host`,
      );
    default:
      return error;
  }
}

export async function serve(config: Config): Promise<void> {
  const logger = createLogger(config.logLevel);
  for (const warning of config.warnings) logger.warn(warning);
  const { ctx, migrations } = await openContext(config);
  if (migrations.length) logger.info({ migrations }, 'database migrated');
  // Counted only when KEYWARD_METRICS_PORT gives them a listener: otherwise nobody could read them.
  const metrics = config.metrics ? new Metrics({ store: ctx.store }) : undefined;
  ctx.observer = metrics;
  const app = await buildApp({
    ctx,
    logger,
    rateLimitPerMinute: config.rateLimitPerMinute,
    authFailureLimitPerMinute: config.authFailureLimitPerMinute,
    trustProxy: config.trustProxy,
    metrics,
    proxy: config.proxy,
  });
  const sweeps = scheduleSweeps(ctx, standardSweeps({ auditRetentionDays: config.auditRetentionDays }), logger);
  // Null when KEYWARD_BACKGROUND_REFRESH_HOURS is 0: nothing is scheduled.
  const backgroundRefresh = scheduleBackgroundRefresh(ctx, { hours: config.backgroundRefreshHours }, logger);
  // Null when KEYWARD_VERIFY_HOURS is 0.
  const credentialChecks = scheduleCredentialChecks(ctx, { hours: config.verifyHours }, logger);
  // connect.failed ("expired") for flows and forms nobody finished: always on, every 30 s.
  const expiryNotices = scheduleExpiryNotices(ctx, {}, logger);
  // Deliveries run in a worker thread with connections of its own, off the API's event loop.
  const webhooks = startWebhookDispatch(ctx, config, logger);
  const flush = setInterval(() => logger.flush(), LOG_FLUSH_INTERVAL_MS);
  flush.unref();

  let metricsServer: MetricsServer | null = null;
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping');
    clearInterval(flush);
    await app.close();
    await metricsServer?.close();
    await sweeps.stop();
    await backgroundRefresh?.stop();
    await credentialChecks?.stop();
    await expiryNotices.stop();
    await webhooks.stop();
    await ctx.store.close();
    await ctx.outbound.close();
    logger.flush();
  };
  // `on`, not `once`: a second signal (Ctrl-C reaches bin/keyward.js's re-run both directly and as
  // forwarded; systemd signals the whole group) must not put Node's default back and kill the stop.
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));

  let address: string;
  try {
    address = await app.listen({ host: config.host, port: config.port });
  } catch (error) {
    await stop('start-up failed');
    throw listenError(error as NodeJS.ErrnoException, config);
  }
  if (!ctx.publicUrl) ctx.publicUrl = `http://localhost:${new URL(address).port}`;
  if (metrics && config.metrics) {
    try {
      metricsServer = await startMetricsServer(metrics, config.metrics);
    } catch (error) {
      // The port is taken, say: start-up fails as a whole rather than run without the metrics asked for.
      await stop('start-up failed');
      throw new ConfigError(
        'KEYWARD_METRICS_PORT',
        `the metrics listener cannot listen on ${config.metrics.host}:${config.metrics.port} (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
      );
    }
  }
  logger.info(
    { address, publicUrl: ctx.publicUrl, database: ctx.store.engine, ...(metricsServer ? { metrics: `${metricsServer.address}/metrics` } : {}) },
    'Keyward is listening',
  );
  logger.flush();
}
