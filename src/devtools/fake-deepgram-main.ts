/**
 * `node dist/devtools/fake-deepgram-main.js` (`npm run fake-deepgram`): runs the fake Deepgram
 * streaming server of ./fake-deepgram.ts, so vagent's Deepgram recogniser can be tried without
 * a Deepgram account.
 *
 * Prints the two `export` lines for the shell that runs `vagent serve` on stdout
 * (`DEEPGRAM_API_KEY`, `VAGENT_DEEPGRAM_URL`), then one line per handshake on stderr (status
 * and the stream's model, language and sample rate; never the key).
 */
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { closeOnSignals, parsePort, restartNote, shellQuote, UsageError } from './cli.js';
import type { FakeDeepgramHandshake } from './fake-deepgram-api.js';
import { startFakeDeepgram } from './fake-deepgram.js';

const USAGE = `usage:
  fake-deepgram [--port 8766] [--host 127.0.0.1] [--api-key K] [--script FILE] [--speech-level N]
      serve a fake Deepgram streaming endpoint at ws://HOST:PORT/v1/listen; prints the exports for \`vagent serve\`
      --script FILE   transcripts, one line per utterance heard, in order (blank lines skipped)
      --speech-level  RMS of a 10 ms frame (of 32767) above which it counts as speech; default 500`;

const OPTIONS = {
  port: { type: 'string' },
  host: { type: 'string' },
  'api-key': { type: 'string' },
  script: { type: 'string' },
  'speech-level': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

function readScript(file: string | undefined): string[] {
  if (file === undefined) return [];
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read --script ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  return text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
}

function handshakeLine(h: FakeDeepgramHandshake): string {
  const q = (k: string): string => {
    const v = h.query[k];
    return Array.isArray(v) ? v.join(',') : (v ?? '-');
  };
  return `[fake-deepgram] ${h.status} model=${q('model')} language=${q('language')} sample_rate=${q('sample_rate')} encoding=${q('encoding')}`;
}

/** Runs the command line; returns the exit code (serving keeps the process alive after returning 0). */
async function main(argv: string[]): Promise<number> {
  let values: ReturnType<typeof parseArgs<{ options: typeof OPTIONS }>>['values'];
  try {
    values = parseArgs({ args: argv, options: OPTIONS }).values;
  } catch (err) {
    process.stderr.write(`fake-deepgram: ${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  try {
    const speechLevel = values['speech-level'] === undefined ? undefined : Number(values['speech-level']);
    if (speechLevel !== undefined && !(speechLevel > 0))
      throw new UsageError(`--speech-level must be a number > 0, got ${values['speech-level']}`);
    const script = readScript(values.script);
    let served = 0;
    const fake = await startFakeDeepgram({
      apiKey: values['api-key'],
      host: values.host ?? '127.0.0.1',
      port: parsePort(values.port, 8766),
      script,
      speechLevel,
      onHandshake: (h) => {
        if (h.status === 101) served++;
        process.stderr.write(`${handshakeLine(h)}\n`);
      },
    });
    process.stdout.write(
      [`export DEEPGRAM_API_KEY=${shellQuote(fake.apiKey)}`, `export VAGENT_DEEPGRAM_URL=${shellQuote(fake.url)}`].join('\n') + '\n',
    );
    process.stderr.write(`[fake-deepgram] listening on ${fake.url} with ${script.length} scripted utterance(s); Ctrl-C stops\n`);
    process.stderr.write(restartNote('fake-deepgram', 2));
    closeOnSignals(
      'fake-deepgram',
      () => fake.close(),
      () => ` after ${served} stream(s), ${fake.remaining} utterance(s) unheard`,
    );
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`fake-deepgram: ${err.message}\n${USAGE}\n`);
      return 2;
    }
    process.stderr.write(`fake-deepgram: ${(err as Error).message}\n`);
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
