/**
 * Keeping credentials out of what vagent shows and stores (never in a response, a stored
 * replay, a log line or an error message): a provider's error text can echo what it
 * was sent (a proxy, a misdirected URL), so messages built from one pass through here.
 */

/** Secrets shorter than this are not searched for (a 1–2 character "key" would blank out ordinary words). */
const MIN_SECRET_CHARS = 3;

/**
 * `text` with every occurrence of each of `secrets` replaced by `[redacted]`. Empty, null or
 * very short (< 3 characters) secrets are skipped.
 */
export function redactSecrets(text: string, secrets: ReadonlyArray<string | null | undefined>): string {
  let out = text;
  for (const s of secrets) {
    if (s && s.length >= MIN_SECRET_CHARS) out = out.split(s).join('[redacted]');
  }
  return out;
}
