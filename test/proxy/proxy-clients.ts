import { request } from 'node:http';
import { connect } from 'node:net';

/** A response read off the wire: its status, headers and body as text. */
export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Sends `text` as is over a fresh TCP connection (for request lines no HTTP client would send: `..` segments,
 * absolute-form targets, garbage) and reads until the server closes the connection.
 */
export function sendRaw(port: number, text: string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const [head = '', ...rest] = raw.split('\r\n\r\n');
      const [statusLine = '', ...headerLines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of headerLines) {
        const colon = line.indexOf(':');
        if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n') });
    });
    socket.end(text);
  });
}

/** A request line and headers asking the server to close the connection after answering. */
export function rawRequest(method: string, target: string, body = ''): string {
  const length =
    body === '' ? '' : `Content-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json\r\n`;
  return `${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n${length}\r\n${body}`;
}

/**
 * POSTs a body that never ends on its own: chunks of `chunkBytes` are written, as fast as the server reads them,
 * until the server answers or `capBytes` are sent (then the body ends). Returns the status and how many bytes had
 * been sent when the answer came: a server that waits for the whole body before answering has taken all `capBytes`.
 */
export function postEndlessBody(
  port: number,
  path: string,
  { chunkBytes, capBytes }: { chunkBytes: number; capBytes: number },
): Promise<{ status: number; sentWhenAnswered: number }> {
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const outgoing = request({
      host: '127.0.0.1',
      port,
      path,
      method: 'POST',
      headers: { 'content-type': 'application/json', connection: 'close' },
    });
    outgoing.on('response', (response) => {
      answered = true;
      const sentWhenAnswered = sent;
      const done = () => {
        resolve({ status: response.statusCode ?? 0, sentWhenAnswered });
        outgoing.destroy();
      };
      response.resume();
      response.on('end', done);
      response.on('error', done);
    });
    outgoing.on('error', (error) => {
      if (!answered) reject(error);
    });
    const chunk = Buffer.alloc(chunkBytes, 'a');
    const writeMore = () => {
      while (!answered && sent < capBytes) {
        sent += chunk.length;
        if (!outgoing.write(chunk)) {
          outgoing.once('drain', writeMore);
          return;
        }
      }
      if (!answered) outgoing.end();
    };
    outgoing.write('{"model": "scripted-model", "messages": [{"role": "user", "content": "');
    writeMore();
  });
}
