/**
 * A TCP relay in front of a server that holds back what the server sends for a while: a network
 * between a node and its database that is slow one way, on 127.0.0.1. What the client sends passes at
 * once; what the server sends arrives `delayMs` later, in order.
 */
import { connect, createServer, type Socket } from 'node:net';

export interface DelayingRelay {
  /** The relay's port on 127.0.0.1. */
  port: number;
  close(): Promise<void>;
}

export async function startDelayingRelay(target: { host: string; port: number }, delayMs: number): Promise<DelayingRelay> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    client.pipe(upstream);
    upstream.on('data', (chunk) => setTimeout(() => client.write(chunk), delayMs));
    upstream.on('close', () => setTimeout(() => client.destroy(), delayMs));
    client.on('close', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
