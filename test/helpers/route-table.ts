/**
 * The /v1 routes the auth matrix runs against, read from a real app's route table rather than listed
 * by hand, each paired with the request that exercises it.
 */
import type { RouteEntry } from '../../src/app.js';
import { startTestApp } from './test-app.js';

export interface MatrixRoute {
  name: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  body?: Record<string, unknown>;
  /** What the handler answers a fully valid request with. */
  ok: { status: number; code?: string };
}

/** The matrix's request for one route: the route named as the router holds it, `GET /v1/end-users/:externalUserId`. */
export type RouteRequests = Record<string, Omit<MatrixRoute, 'name' | 'method'>>;

/**
 * The /v1 routes in an app's route table, each with its request from `requests`. A route with no
 * request is `missing` and a request naming no route is `stale`: the matrix asserts both are empty,
 * so a new /v1 route cannot escape the fifteen steps.
 */
export function matrixRoutes(table: readonly RouteEntry[], requests: RouteRequests) {
  const names = [...new Set(table.filter((r) => r.url === '/v1' || r.url.startsWith('/v1/')).map((r) => `${r.method} ${r.url}`))];
  const routes: MatrixRoute[] = names
    .filter((name) => Object.hasOwn(requests, name))
    .map((name) => ({ name, method: name.split(' ', 1)[0] as MatrixRoute['method'], ...requests[name]! }));
  return {
    routes,
    missing: names.filter((name) => !Object.hasOwn(requests, name)),
    stale: Object.keys(requests).filter((name) => !names.includes(name)),
  };
}

/** The route table of a real app (on SQLite), read once while a test file is collected. */
export async function appRouteTable(): Promise<RouteEntry[]> {
  const t = await startTestApp('sqlite');
  try {
    return [...t.app.routeTable];
  } finally {
    await t.close();
  }
}
