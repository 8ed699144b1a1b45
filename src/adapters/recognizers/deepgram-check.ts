/**
 * `vagent telephony check` for Deepgram: one authenticated handshake with the streaming endpoint
 * (./deepgram-protocol.ts), its outcome in plain words.
 */
import { redactSecrets } from '../../domain/redact.js';
import { checkWsUrl, probeHandshake } from './cloud-socket.js';
import { DEFAULT_DEEPGRAM_MODEL, DEFAULT_DEEPGRAM_URL } from './deepgram-protocol.js';

/** The outcome of {@link checkDeepgram}. */
export type DeepgramCheck =
  { ok: true; detail: string } | { ok: false; problem: 'unauthenticated' | 'rate_limited' | 'unreachable' | 'error'; message: string };

/**
 * An authenticated handshake with Deepgram's streaming endpoint (for `vagent telephony check`):
 * opens a nova-3 linear16 socket, sends `CloseStream` and waits for the close. Bills no audio.
 * Never throws; messages are plain words and never hold the key.
 * @param opts.apiKey    the key to try
 * @param opts.url       the endpoint; default {@link DEFAULT_DEEPGRAM_URL}
 * @param opts.timeoutMs deadline of the whole check, ms; default 5000
 */
export async function checkDeepgram(opts: { apiKey: string; url?: string; timeoutMs?: number }): Promise<DeepgramCheck> {
  const timeoutMs = opts.timeoutMs ?? 5000;
  const key = typeof opts.apiKey === 'string' ? opts.apiKey.trim() : '';
  if (key === '') return { ok: false, problem: 'unauthenticated', message: 'no Deepgram API key is set (DEEPGRAM_API_KEY)' };
  let url: URL;
  try {
    url = checkWsUrl(opts.url ?? DEFAULT_DEEPGRAM_URL, 'Deepgram');
  } catch {
    return { ok: false, problem: 'error', message: 'the Deepgram URL must be a ws:// or wss:// URL' };
  }
  url.searchParams.set('model', DEFAULT_DEEPGRAM_MODEL);
  url.searchParams.set('encoding', 'linear16');
  url.searchParams.set('sample_rate', '16000');
  url.searchParams.set('channels', '1');
  const host = url.host;
  const outcome = await probeHandshake(url.toString(), { Authorization: `Token ${key}` }, timeoutMs, (ws) =>
    ws.send(JSON.stringify({ type: 'CloseStream' })),
  );
  const result = ((): DeepgramCheck => {
    switch (outcome.kind) {
      case 'open':
        return { ok: true, detail: `Deepgram at ${host} accepted the API key (${DEFAULT_DEEPGRAM_MODEL} streaming handshake)` };
      case 'timeout':
        return { ok: false, problem: 'unreachable', message: `Deepgram at ${host} did not answer within ${timeoutMs} ms` };
      case 'unreachable':
        return { ok: false, problem: 'unreachable', message: `cannot reach Deepgram at ${host} (${outcome.code})` };
      case 'refused': {
        const status = outcome.status;
        if (status === 401)
          return {
            ok: false,
            problem: 'unauthenticated',
            message: 'Deepgram rejected the API key (401): check DEEPGRAM_API_KEY',
          };
        if (status === 403)
          return {
            ok: false,
            problem: 'unauthenticated',
            message: `Deepgram refused this API key access to ${DEFAULT_DEEPGRAM_MODEL} streaming (403): check the key's project and permissions`,
          };
        if (status === 429)
          return {
            ok: false,
            problem: 'rate_limited',
            message: 'Deepgram is rate-limiting this key (429): try again shortly, or raise the project concurrency limit',
          };
        if (status >= 500)
          return { ok: false, problem: 'error', message: `Deepgram is having trouble (HTTP ${status}): try again shortly` };
        return { ok: false, problem: 'error', message: `Deepgram refused the handshake (HTTP ${status})` };
      }
    }
  })();
  if (!result.ok) result.message = redactSecrets(result.message, [key]);
  return result;
}
