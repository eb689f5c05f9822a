/**
 * A real HTTP server standing in for a company's webhook endpoint: it records every request (headers
 * and raw body, as a receiver must verify them) and answers what the test scripts, in order, then
 * the default. Verification is left to the standardwebhooks package, which nobody here wrote.
 */
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  body: string;
  receivedAt: number;
}

/** What the receiver does with one request: answer a status (with headers), or never answer. */
export type ReceiverAnswer = { status: number; headers?: Record<string, string> } | 'hang';

export interface WebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  /** Answers for the next requests, in order; once used up, `fallback` answers. */
  script(...answers: ReceiverAnswer[]): void;
  fallback: ReceiverAnswer;
  /** Requests being held open ('hang') right now. */
  readonly hanging: number;
  /** Resolves once `count` requests in all have arrived. */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(fallback: ReceiverAnswer = { status: 204 }): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const queue: ReceiverAnswer[] = [];
  const held = new Set<ServerResponse>();
  const waiters: (() => void)[] = [];
  const receiver: WebhookReceiver = {
    url: '',
    received,
    script: (...answers) => void queue.push(...answers),
    fallback,
    get hanging() {
      return held.size;
    },
    waitFor: (count, timeoutMs = 20_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (received.length < count) return false;
          clearTimeout(timer);
          resolve(received);
          return true;
        };
        const timer = setTimeout(() => reject(new Error(`the receiver got ${received.length} of ${count} requests`)), timeoutMs);
        // Each arrival wakes every waiter once; one still short of its count waits for the next.
        const wait = () => {
          if (!check()) waiters.push(wait);
        };
        wait();
      }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const response of held) response.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), receivedAt: Date.now() });
      for (const wake of waiters.splice(0)) wake();
      const answer = queue.shift() ?? receiver.fallback;
      if (answer === 'hang') {
        held.add(response);
        response.on('close', () => held.delete(response));
        return;
      }
      response.writeHead(answer.status, answer.headers ?? {});
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
  return receiver;
}

/**
 * The body as the standardwebhooks package verifies it with `secret` (throws where the signature, id
 * or timestamp does not hold). `at` is the time to verify as of (ms): the library checks the
 * timestamp against its clock, and a test clock may have been moved.
 */
export function verifiedEvent(secret: string, webhook: ReceivedWebhook, at = Date.now()): { type: string; timestamp: string; data: Record<string, unknown> } {
  const realNow = Date.now;
  Date.now = () => at;
  try {
    return new Webhook(secret).verify(webhook.body, webhook.headers as Record<string, string>) as {
      type: string;
      timestamp: string;
      data: Record<string, unknown>;
    };
  } finally {
    Date.now = realNow;
  }
}
