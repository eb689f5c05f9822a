/**
 * A plain node:http server on 127.0.0.1 standing in for a static provider's API (CONTRACT 8.3): it
 * records every request as it arrived (method, raw URL, headers) and answers what the test says, by
 * request: a status, or never ('hang'). And a custom static provider of a server that calls it, with a
 * `verify` request, as the CLI would define one.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { StaticField } from '../../src/catalog/provider-definition.js';
import { CLI_ACTOR, type ServiceContext } from '../../src/services/context.js';
import { addCustomStaticProvider } from '../../src/services/providers/custom-providers.js';

export interface ApiRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
}

export type ApiAnswer = number | 'hang';

export interface ProviderApiStandIn {
  /** `http://127.0.0.1:port` */
  origin: string;
  requests: ApiRequest[];
  /** What each request is answered (200 unless the test sets it). */
  answer: (request: ApiRequest) => ApiAnswer;
  close(): Promise<void>;
}

export async function startProviderApi(): Promise<ProviderApiStandIn> {
  const held = new Set<ServerResponse>();
  const standIn: ProviderApiStandIn = {
    origin: '',
    requests: [],
    answer: () => 200,
    close: () =>
      new Promise<void>((resolve) => {
        for (const response of held) response.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    request.resume();
    request.on('end', () => {
      const seen = { method: request.method ?? '', url: request.url ?? '', headers: request.headers };
      standIn.requests.push(seen);
      const answer = standIn.answer(seen);
      if (answer === 'hang') {
        held.add(response);
        response.on('close', () => held.delete(response));
        return;
      }
      const redirect = answer >= 300 && answer < 400 ? { location: `${standIn.origin}/elsewhere` } : {};
      response.writeHead(answer, { 'content-type': 'application/json', ...redirect });
      response.end(JSON.stringify({ status: answer }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  standIn.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return standIn;
}

/** The fields of the stand-in provider: a secret key, and a non-secret account that the verify path names. */
export const KEY_API_FIELDS: StaticField[] = [
  { name: 'apiKey', label: 'API key', secret: true, required: true },
  { name: 'account', label: 'Account', secret: false, required: true },
];
export const KEY_API = { slug: 'keyapi', name: 'Key API' };

/** Adds (and enables) the custom provider `keyapi` on the server: bearer apiKey, verify `GET /accounts/{account}/me` under {origin}/v2. */
export async function addKeyApiProvider(ctx: ServiceContext, serverId: string, standIn: Pick<ProviderApiStandIn, 'origin'>): Promise<void> {
  await addCustomStaticProvider(ctx, {
    serverId,
    slug: KEY_API.slug,
    name: KEY_API.name,
    fields: KEY_API_FIELDS,
    api: { apiBaseUrl: `${standIn.origin}/v2`, auth: 'bearer:apiKey', verify: 'GET /accounts/{account}/me' },
    actor: CLI_ACTOR,
  });
}
