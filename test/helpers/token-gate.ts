/**
 * A pass-through to a real token endpoint that, while `hold` is set, keeps each request waiting
 * until release(): a slow provider whose slowness the test controls to the request.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface TokenGate {
  /** The gate's token URL: give it to a provider in place of the real one. */
  url: string;
  /** While true, requests wait at the gate. */
  hold: boolean;
  /** Requests that reached the gate so far. */
  arrived: number;
  /** Lets every waiting request through, and stops holding. */
  release(): void;
  close(): Promise<void>;
}

export async function startTokenGate(tokenUrl: string): Promise<TokenGate> {
  const waiting: (() => void)[] = [];
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    gate.arrived += 1;
    if (gate.hold) await new Promise<void>((go) => waiting.push(go));
    const headers: Record<string, string> = { 'content-type': String(req.headers['content-type']) };
    if (req.headers.authorization) headers.authorization = req.headers.authorization;
    const answer = await fetch(tokenUrl, { method: 'POST', headers, body: Buffer.concat(chunks) });
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'text/plain' });
    res.end(Buffer.from(await answer.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const gate: TokenGate = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`,
    hold: false,
    arrived: 0,
    release() {
      gate.hold = false;
      for (const go of waiting.splice(0)) go();
    },
    close: () =>
      new Promise<void>((resolve) => {
        gate.release();
        server.close(() => resolve());
      }),
  };
  return gate;
}
