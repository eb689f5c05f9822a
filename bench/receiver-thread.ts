/**
 * The test suite's webhook receiver (test/helpers/webhook-receiver.ts), run in a worker thread of the
 * benchmark: its requests are answered on the thread's own event loop, so a latency the benchmark's
 * client measures on the main thread is Keyward's answer, not the time the client's event loop spent
 * answering webhooks first (thousands a second while a backlog drains). The main thread asks for what
 * was received when it needs it; nothing crosses per request.
 */
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { type ReceivedWebhook, type ReceiverAnswer, startWebhookReceiver } from '../test/helpers/webhook-receiver.js';

type Question = { kind: 'count' } | { kind: 'since'; from: number } | { kind: 'close' };
type Ask = Question & { id: number };
type Reply = { id: number; count?: number; received?: ReceivedWebhook[] };

export interface ThreadReceiver {
  url: string;
  /** Requests received so far. */
  count(): Promise<number>;
  /** The requests received from index `from` on, in order. */
  since(from: number): Promise<ReceivedWebhook[]>;
  close(): Promise<void>;
}

export async function startReceiverThread(answer: ReceiverAnswer): Promise<ThreadReceiver> {
  const worker = new Worker(new URL(import.meta.url), { workerData: answer });
  const pending = new Map<number, { resolve: (reply: Reply) => void; reject: (error: Error) => void }>();
  let asked = 0;
  let ended: Error | null = null;
  worker.on('message', (reply: Reply | { url: string }) => {
    if ('id' in reply) {
      pending.get(reply.id)?.resolve(reply);
      pending.delete(reply.id);
    }
  });
  // A thread that dies answers nothing more: what waits on it fails rather than hang the benchmark.
  const end = (error: Error) => {
    ended ??= error;
    for (const { reject } of pending.values()) reject(ended);
    pending.clear();
  };
  worker.on('error', end);
  worker.on('exit', (code) => end(new Error(`the receiver thread ended (exit code ${code})`)));
  const ask = (message: Question) =>
    new Promise<Reply>((resolve, reject) => {
      if (ended) return reject(ended);
      const id = ++asked;
      pending.set(id, { resolve, reject });
      worker.postMessage({ ...message, id });
    });
  const url = await new Promise<string>((resolve, reject) => {
    worker.once('message', (first: { url: string }) => resolve(first.url));
    worker.once('error', reject);
  });
  return {
    url,
    count: async () => (await ask({ kind: 'count' })).count!,
    since: async (from) => (await ask({ kind: 'since', from })).received!,
    close: async () => {
      if (!ended) await ask({ kind: 'close' });
      await worker.terminate();
    },
  };
}

if (!isMainThread) {
  const port = parentPort!;
  const receiver = await startWebhookReceiver(workerData as ReceiverAnswer);
  port.postMessage({ url: receiver.url });
  port.on('message', (ask: Ask) => {
    const reply = (rest: Omit<Reply, 'id'> = {}) => port.postMessage({ id: ask.id, ...rest });
    if (ask.kind === 'count') reply({ count: receiver.received.length });
    else if (ask.kind === 'since') reply({ received: receiver.received.slice(ask.from) });
    else void receiver.close().then(() => reply());
  });
}
