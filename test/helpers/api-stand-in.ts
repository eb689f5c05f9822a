/**
 * A provider's API as the gateway's tests need one: a node:http server on 127.0.0.1 that records every
 * request it receives (method, the target exactly as sent, headers, body bytes) and answers as the
 * test scripts it, by default 200 with a small JSON body naming what it got.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  /** The request target as it came on the wire: path and query, still percent-encoded. */
  target: string;
  headers: IncomingMessage['headers'];
  /** The raw header lines, names as sent (for a scan that must see every byte). */
  rawHeaders: string[];
  body: Buffer;
  /** The body was cut off before its end. */
  aborted: boolean;
}

/** Answers one request; the request's body has been read into `received.body`. */
export type ApiAnswer = (received: ReceivedRequest, res: ServerResponse, req: IncomingMessage) => void | Promise<void>;

export interface ApiStandIn {
  /** http://127.0.0.1:<port> */
  url: string;
  received: ReceivedRequest[];
  /** How the next requests are answered (the default answer unless set). */
  answer: ApiAnswer;
  /** Requests that have arrived but whose answer has not been sent (for the busy and timeout tests). */
  readonly open: number;
  reset(): void;
  close(): Promise<void>;
}

export const echoAnswer: ApiAnswer = (received, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'x-upstream-own': 'yes', 'set-cookie': 'tracker=1' });
  res.end(JSON.stringify({ method: received.method, target: received.target, bytes: received.body.byteLength }));
};

/** `streamBodies: true` hands the request to `answer` unread (`received.body` empty), for uploads too large to keep. */
export async function startApiStandIn(options: { streamBodies?: boolean } = {}): Promise<ApiStandIn> {
  const received: ReceivedRequest[] = [];
  let open = 0;
  const standIn: ApiStandIn = {
    url: '',
    received,
    answer: echoAnswer,
    get open() {
      return open;
    },
    reset() {
      received.length = 0;
      standIn.answer = echoAnswer;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = createServer(async (req, res) => {
    open++;
    res.on('close', () => open--);
    const chunks: Buffer[] = [];
    const request: ReceivedRequest = {
      method: req.method ?? '',
      target: req.url ?? '',
      headers: req.headers,
      rawHeaders: req.rawHeaders,
      body: Buffer.alloc(0),
      aborted: false,
    };
    received.push(request);
    try {
      if (!options.streamBodies) for await (const chunk of req) chunks.push(chunk as Buffer);
    } catch {
      // The client broke off its request (Keyward aborting an upload past its limit): recorded, not answered.
      request.aborted = true;
      res.destroy();
      return;
    } finally {
      request.body = Buffer.concat(chunks);
    }
    try {
      await standIn.answer(request, res, req);
    } catch {
      res.destroy();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  standIn.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return standIn;
}
