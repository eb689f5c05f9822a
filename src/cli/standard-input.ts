/**
 * A secret a command reads from standard input rather than from its arguments, which other users of
 * the machine can read in the process list and the shell keeps in its history.
 */

/** Far above any password a rule accepts: a bound on what is held in memory, not a rule. */
const MAX_INPUT_BYTES = 64 * 1024;

/**
 * Piped (`printf '%s\n' "$PW" | keyward …`): everything up to the end, one trailing newline dropped,
 * as a shell's echo or a file adds one. At a terminal: one line typed without echo, after a prompt on
 * stderr (stdout stays the command's answer).
 */
export function readSecret(prompt: string): Promise<string> {
  return process.stdin.isTTY ? readTypedLine(prompt) : readPiped();
}

async function readPiped(): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_INPUT_BYTES) break;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

function readTypedLine(prompt: string): Promise<string> {
  const stdin = process.stdin;
  process.stderr.write(prompt);
  stdin.setRawMode(true);
  stdin.setEncoding('utf8');
  let typed = '';
  return new Promise((resolve, reject) => {
    const done = (error?: Error) => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off('data', onData);
      process.stderr.write('\n');
      if (error) reject(error);
      else resolve(typed);
    };
    const onData = (text: string) => {
      for (const char of text) {
        if (char === '\r' || char === '\n' || char === '\u0004') return done();
        if (char === '\u0003') return done(new Error('interrupted: no password was set'));
        if (char === '\u007f' || char === '\b') typed = [...typed].slice(0, -1).join('');
        else if (typed.length < MAX_INPUT_BYTES) typed += char;
      }
    };
    stdin.on('data', onData);
    stdin.resume();
  });
}
