/**
 * `node dist/devtools/fake-sarvam-main.js` (`npm run fake-sarvam`): runs the fake Sarvam
 * streaming speech-to-text server of ./fake-sarvam.ts, for trying vagent's Sarvam recogniser
 * without a Sarvam account.
 *
 * Prints the three `export` lines for the shell that runs `vagent serve` on stdout
 * (`SARVAM_API_KEY`, `VAGENT_SARVAM_URL`, `VAGENT_SARVAM_TTS_URL` — the last for Sarvam voices,
 * ./fake-sarvam-tts.ts), then one line per connection on stderr (its query, never the key;
 * transcripts are not logged).
 *
 * `--script FILE`: the transcripts to answer with, in order — a JSON array of strings, or one
 * transcript per line (blank lines skipped), UTF-8 (Devanagari or Latin script).
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { closeOnSignals, restartNote, shellQuote, UsageError } from './cli.js';
import { startFakeSarvam } from './fake-sarvam.js';

const USAGE = `usage:
  fake-sarvam [--port 0] [--host 127.0.0.1] [--api-key K] [--script FILE] [--answer-delay-ms 0]
      serve a fake Sarvam streaming speech-to-text and text-to-speech API; prints the exports for \`vagent serve\``;

const OPTIONS = {
  port: { type: 'string' },
  host: { type: 'string' },
  'api-key': { type: 'string' },
  script: { type: 'string' },
  'answer-delay-ms': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** The transcripts of a script file: a JSON array of strings, or one per non-blank line. */
function parseScript(text: string): string[] {
  const trimmed = text.trim();
  if (trimmed.startsWith('[')) {
    const list: unknown = JSON.parse(trimmed);
    if (!Array.isArray(list) || !list.every((t) => typeof t === 'string'))
      throw new UsageError('--script: a JSON script must be an array of strings');
    return list;
  }
  return text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '');
}

function parseNumber(name: string, raw: string | undefined, fallback: number, max: number): number {
  const n = Number(raw ?? fallback);
  if (!Number.isInteger(n) || n < 0 || n > max) throw new UsageError(`--${name} must be a whole number 0-${max}, got ${raw}`);
  return n;
}

async function main(argv: string[]): Promise<number> {
  let values: ReturnType<typeof parseArgs<{ options: typeof OPTIONS }>>['values'];
  try {
    values = parseArgs({ args: argv, options: OPTIONS }).values;
    if (values.help) {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    const script = values.script ? parseScript(readFileSync(values.script, 'utf8')) : [];
    const fake = await startFakeSarvam({
      apiKey: values['api-key'],
      host: values.host ?? '127.0.0.1',
      port: parseNumber('port', values.port, 0, 65535),
      answerDelayMs: parseNumber('answer-delay-ms', values['answer-delay-ms'], 0, 60_000),
      script,
      onConnection: (c) => process.stderr.write(`[fake-sarvam] connection ${new URLSearchParams(c.query).toString()}\n`),
    });
    process.stdout.write(
      `export SARVAM_API_KEY=${shellQuote(fake.apiKey)}\nexport VAGENT_SARVAM_URL=${shellQuote(fake.url)}\n` +
        `export VAGENT_SARVAM_TTS_URL=${shellQuote(fake.ttsUrl)}\n`,
    );
    process.stderr.write(`[fake-sarvam] listening on ${fake.url} with ${script.length} scripted transcript(s); Ctrl-C stops\n`);
    process.stderr.write(`[fake-sarvam] text-to-speech at ${fake.ttsUrl}/text-to-speech (spoken by the embedded engine)\n`);
    process.stderr.write(restartNote('fake-sarvam', 3));
    closeOnSignals('fake-sarvam', () => fake.close());
    return 0;
  } catch (err) {
    const usage = err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
    process.stderr.write(`fake-sarvam: ${(err as Error).message}${usage ? `\n${USAGE}` : ''}\n`);
    return usage ? 2 : 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
