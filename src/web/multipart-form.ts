/**
 * A small, bounded reader of `multipart/form-data` (RFC 7578) for a form that uploads one small file:
 * the dashboard's Branding form and its logo. No multipart library ships with Keyward, and one form
 * needs little of the format, so this reads what browsers send and refuses anything else (a field the
 * form does not have, a field twice, a file in a text field, a malformed part) as a request our pages
 * did not make.
 *
 * The text fields become the body, as a urlencoded form's would (so the dashboard's CSRF check and the
 * route's schema read them as usual); the file is kept aside (`uploadedFile`). At most `keepBytes` of
 * the body are kept in memory: a larger file is read to its end but not kept, and comes out marked
 * `truncated`, so the form can say the file is too large rather than fail as a whole. Browsers send
 * the fields in the form's order, so the file, last in the form, is the only part cut. Past
 * `readBytes` the request is refused outright (413).
 */
import type { FastifyRequest } from 'fastify';
import { Problem } from './problem.js';

export interface UploadedFile {
  /** What was kept of the file: all of it unless `truncated`. */
  bytes: Buffer;
  /** The file went on past what the reader keeps: it is larger than any the form takes. */
  truncated: boolean;
}

export interface MultipartLimits {
  /** The one field that carries a file. */
  fileField: string;
  /** The text fields the form has (the CSRF token among them). */
  textFields: readonly string[];
  /** The bytes of the body kept in memory: the largest file taken, plus room for the other fields. */
  keepBytes: number;
  /** The bytes read at all before the request is refused. */
  readBytes: number;
}

const uploads = new WeakMap<FastifyRequest, UploadedFile>();

/** The file the request uploaded, if it chose one (an empty file input sends a part with no bytes: none). */
export function uploadedFile(request: FastifyRequest): UploadedFile | undefined {
  return uploads.get(request);
}

const MAX_PARTS = 16;
const MAX_HEADER_BYTES = 1024;
const MAX_TEXT_BYTES = 4096;
const CRLF = Buffer.from('\r\n');
const HEADER_END = Buffer.from('\r\n\r\n');

const unreadable = () => new Problem('validation_failed', 'This request could not be read.', { errors: [] });
const tooLarge = () => new Problem('payload_too_large', 'The request body is too large.');

function boundaryOf(contentType: string | undefined): string {
  const match = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;"]{1,70}))\s*(;|$)/i.exec(contentType ?? '');
  const boundary = match?.[1] ?? match?.[2];
  if (!boundary) throw unreadable();
  return boundary;
}

/** A part's name and whether it declares a file (a `filename`, empty when no file was chosen). */
function dispositionOf(headers: string): { name: string; file: boolean } {
  const lines = headers.split('\r\n');
  const disposition = lines.filter((line) => /^content-disposition:/i.test(line));
  if (disposition.length !== 1) throw unreadable();
  const value = disposition[0]!.slice(disposition[0]!.indexOf(':') + 1);
  const parsed = /^\s*form-data\s*;\s*name="([^"]*)"\s*(?:;\s*filename="([^"]*)"\s*)?$/i.exec(value);
  if (!parsed) throw unreadable();
  return { name: parsed[1]!, file: parsed[2] !== undefined };
}

/** The body's text fields and its file, from the bytes kept (`cut`: more followed them). */
export function readMultipart(kept: Buffer, cut: boolean, boundary: string, limits: MultipartLimits): { fields: Record<string, string>; file?: UploadedFile } {
  const delimiter = Buffer.from(`\r\n--${boundary}`);
  // The first delimiter has no line break before it; reading as if it had one finds every delimiter alike.
  const body = Buffer.concat([CRLF, kept]);
  if (!body.subarray(0, delimiter.length).equals(delimiter)) throw unreadable();
  const fields: Record<string, string> = Object.create(null);
  let file: UploadedFile | undefined;
  let at = delimiter.length;
  for (let parts = 0; ; parts += 1) {
    if (body.subarray(at, at + 2).toString() === '--') return { fields, file };
    if (parts === MAX_PARTS || !body.subarray(at, at + 2).equals(CRLF)) throw unreadable();
    const headerEnd = body.indexOf(HEADER_END, at + 2);
    if (headerEnd < 0 || headerEnd - at > MAX_HEADER_BYTES) throw cut ? tooLarge() : unreadable();
    const { name, file: isFile } = dispositionOf(body.subarray(at + 2, headerEnd).toString('latin1'));
    if (Object.hasOwn(fields, name) || (name === limits.fileField && file !== undefined)) throw unreadable();
    const dataStart = headerEnd + HEADER_END.length;
    const next = body.indexOf(delimiter, dataStart);
    if (name === limits.fileField && isFile) {
      if (next < 0) {
        if (!cut) throw unreadable();
        return { fields, file: { bytes: body.subarray(dataStart), truncated: true } };
      }
      file = { bytes: body.subarray(dataStart, next), truncated: false };
    } else if (limits.textFields.includes(name) && !isFile) {
      if (next < 0) throw cut ? tooLarge() : unreadable();
      if (next - dataStart > MAX_TEXT_BYTES) throw unreadable();
      try {
        fields[name] = new TextDecoder('utf-8', { fatal: true }).decode(body.subarray(dataStart, next));
      } catch {
        throw unreadable();
      }
    } else {
      throw unreadable();
    }
    at = next + delimiter.length;
  }
}

/**
 * The content-type parser for `multipart/form-data` on the scope of the one route that takes it: reads
 * at most `readBytes`, keeps at most `keepBytes`, answers the text fields as the body.
 */
export function multipartParser(limits: MultipartLimits) {
  return (request: FastifyRequest, payload: NodeJS.ReadableStream, done: (error: Error | null, body?: unknown) => void) => {
    let boundary: string;
    try {
      boundary = boundaryOf(request.headers['content-type']);
    } catch (error) {
      done(error as Error);
      return;
    }
    if (Number(request.headers['content-length']) > limits.readBytes) {
      done(tooLarge());
      return;
    }
    const chunks: Buffer[] = [];
    let kept = 0;
    let read = 0;
    const stop = () => {
      payload.removeListener('data', onData);
      payload.removeListener('end', onEnd);
      payload.removeListener('error', onError);
    };
    const onData = (chunk: Buffer | string) => {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      read += bytes.length;
      if (read > limits.readBytes) {
        stop();
        done(tooLarge());
        return;
      }
      const room = limits.keepBytes - kept;
      if (room > 0) {
        chunks.push(bytes.subarray(0, room));
        kept += Math.min(room, bytes.length);
      }
    };
    const onEnd = () => {
      stop();
      try {
        const { fields, file } = readMultipart(Buffer.concat(chunks), read > kept, boundary, limits);
        if (file && (file.bytes.length > 0 || file.truncated)) uploads.set(request, file);
        done(null, fields);
      } catch (error) {
        done(error as Error);
      }
    };
    const onError = (error: Error) => {
      stop();
      done(error);
    };
    payload.on('data', onData);
    payload.on('end', onEnd);
    payload.on('error', onError);
    payload.resume();
  };
}
