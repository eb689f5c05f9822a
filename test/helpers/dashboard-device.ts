/**
 * A dashboard browser on a device of its own: a DashboardClient whose every request carries the
 * device's User-Agent and comes from its address, as the sessions of the "Security" page and the
 * sign-in audit record them.
 */
import type { FastifyInstance, InjectOptions } from 'fastify';
import { DashboardClient } from './dashboard-session.js';

export interface Device {
  userAgent: string;
  address: string;
}

export function browserOn(app: FastifyInstance, device: Device): DashboardClient {
  const from = {
    inject: (options: InjectOptions) =>
      app.inject({ ...options, remoteAddress: device.address, headers: { ...options.headers, 'user-agent': device.userAgent } }),
  };
  // The client calls nothing of the app but inject.
  return new DashboardClient(from as unknown as FastifyInstance);
}
