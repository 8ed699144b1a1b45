/**
 * `vagent telephony check` for Sarvam: one authenticated handshake with the streaming endpoint
 * (./sarvam-protocol.ts), its outcome in plain words.
 */
import { redactSecrets } from '../../domain/redact.js';
import { checkWsUrl, probeHandshake } from './cloud-socket.js';
import { END_OF_STREAM_MESSAGE, SARVAM_DEFAULT_MODE, SARVAM_DEFAULT_MODEL, SARVAM_DEFAULT_URL, streamUrl } from './sarvam-protocol.js';

/** The outcome of {@link checkSarvam}. */
export type SarvamCheck =
  { ok: true; detail: string } | { ok: false; problem: 'unauthenticated' | 'rate_limited' | 'unreachable' | 'error'; message: string };

/**
 * Checks that Sarvam accepts `apiKey`: one authenticated WebSocket handshake to the streaming
 * endpoint (en-IN, the default model), closed at once with `end_of_stream` — no audio is sent.
 * For `vagent telephony check`. Never throws; the key never appears in the result.
 * @param opts.url       endpoint; default {@link SARVAM_DEFAULT_URL}
 * @param opts.timeoutMs handshake deadline, ms; default 5000
 * @returns `ok` with a one-line detail, or the problem in plain words: `unauthenticated` (401/403),
 *          `rate_limited` (429), `unreachable` (no connection, or no answer in time), `error` (anything else)
 */
export async function checkSarvam(opts: { apiKey: string; url?: string; timeoutMs?: number }): Promise<SarvamCheck> {
  const url = opts.url ?? SARVAM_DEFAULT_URL;
  try {
    checkWsUrl(url, 'Sarvam');
  } catch (err) {
    return { ok: false, problem: 'error', message: (err as Error).message };
  }
  if (typeof opts.apiKey !== 'string' || opts.apiKey.trim() === '')
    return { ok: false, problem: 'unauthenticated', message: 'no Sarvam API subscription key is set (SARVAM_API_KEY)' };
  const host = new URL(url).host;
  const timeoutMs = opts.timeoutMs ?? 5000;
  const outcome = await probeHandshake(
    streamUrl(url, { language: 'en-IN', model: SARVAM_DEFAULT_MODEL, mode: SARVAM_DEFAULT_MODE }),
    { 'Api-Subscription-Key': opts.apiKey },
    timeoutMs,
    (ws) => ws.send(END_OF_STREAM_MESSAGE),
  );
  const result = ((): SarvamCheck => {
    switch (outcome.kind) {
      case 'open':
        return {
          ok: true,
          detail: `Sarvam at ${host} accepted the API subscription key (streaming speech-to-text, ${SARVAM_DEFAULT_MODEL})`,
        };
      case 'timeout':
        return { ok: false, problem: 'unreachable', message: `Sarvam at ${host} did not answer within ${timeoutMs} ms` };
      case 'unreachable':
        return { ok: false, problem: 'unreachable', message: `cannot reach Sarvam at ${host} (${outcome.code})` };
      case 'refused': {
        const status = outcome.status;
        if (status === 401 || status === 403)
          return {
            ok: false,
            problem: 'unauthenticated',
            message: `Sarvam rejected the API subscription key (${status}); check SARVAM_API_KEY`,
          };
        if (status === 429)
          return {
            ok: false,
            problem: 'rate_limited',
            message: 'Sarvam is rate limiting this API key or its credits are used up (429); try again later or check the plan',
          };
        return { ok: false, problem: 'error', message: `Sarvam answered the handshake with HTTP ${status}` };
      }
    }
  })();
  if (!result.ok) return { ...result, message: redactSecrets(result.message, [opts.apiKey]) };
  return result;
}
