/**
 * What the cloud recognisers' WebSocket adapters (./deepgram.ts, ./sarvam.ts) share, written
 * once: the endpoint URL check, the shape of a failed connection attempt, and the authenticated
 * handshake behind `vagent telephony check` (one authenticated handshake with each configured
 * provider; docs/media.md "Cloud speech recognition").
 */
import WebSocket from 'ws';
import type { RecognizerErrorKind } from '../../media/recognizer.js';

/** A failed connection attempt of a stream, before the stream decides to retry or fail. */
export interface ConnectFailure {
  kind: RecognizerErrorKind;
  /** Plain words for the error (never the key). */
  message: string;
  /** Whether one reconnect may help (5xx, 429, a drop, a timeout), not a refusal (401/403/400). */
  retry: boolean;
  /** Wait before that reconnect, ms (429). */
  delayMs?: number;
}

/**
 * Checks that `url` is a `ws:` or `wss:` URL.
 * @param provider the provider's name for the message, e.g. `Deepgram`
 * @returns the parsed URL
 * @throws RangeError `the <provider> URL must be a ws:// or wss:// URL; got …`
 */
export function checkWsUrl(url: string, provider: string): URL {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new RangeError(`the ${provider} URL must be a ws:// or wss:// URL; got ${JSON.stringify(url)}`);
  }
  if (u.protocol !== 'ws:' && u.protocol !== 'wss:')
    throw new RangeError(`the ${provider} URL must be a ws:// or wss:// URL; got ${u.protocol}`);
  return u;
}

/** How an authenticated handshake ({@link probeHandshake}) went. */
export type HandshakeOutcome =
  /** The server upgraded the connection: the key was accepted. */
  | { kind: 'open' }
  /** The server answered the upgrade with an HTTP status (401, 403, 429, 5xx…). */
  | { kind: 'refused'; status: number }
  /** No connection (`code` is the socket error code, or its message). */
  | { kind: 'unreachable'; code: string }
  /** No answer within the deadline. */
  | { kind: 'timeout' };

/**
 * Opens a WebSocket to `url` with `headers` (the credentials), and as soon as the server has
 * answered the upgrade, lets `goodbye` send what ends the provider's stream politely (no audio
 * is ever sent) and closes. Never throws.
 * @param timeoutMs deadline of the whole handshake, ms
 */
export function probeHandshake(
  url: string,
  headers: Record<string, string>,
  timeoutMs: number,
  goodbye: (ws: WebSocket) => void,
): Promise<HandshakeOutcome> {
  return new Promise<HandshakeOutcome>((resolve) => {
    let settled = false;
    const ws = new WebSocket(url, { headers, perMessageDeflate: false, followRedirects: false });
    const end = (outcome: HandshakeOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      ws.on('error', () => undefined); // late errors of a socket nobody waits for
      try {
        if (ws.readyState === WebSocket.CONNECTING) ws.terminate();
        else if (ws.readyState === WebSocket.OPEN) ws.close(1000);
      } catch {
        // closing anyway
      }
      resolve(outcome);
    };
    const timer = setTimeout(() => end({ kind: 'timeout' }), timeoutMs);
    ws.on('unexpected-response', (req, res) => {
      res.resume();
      req.destroy();
      end({ kind: 'refused', status: res.statusCode ?? 0 });
    });
    ws.on('open', () => {
      try {
        goodbye(ws);
      } catch {
        // the outcome is known: the server accepted the key
      }
      end({ kind: 'open' });
    });
    ws.on('error', (err: NodeJS.ErrnoException) => end({ kind: 'unreachable', code: err.code ?? err.message }));
  });
}
