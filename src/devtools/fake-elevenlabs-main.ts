/**
 * `node dist/devtools/fake-elevenlabs-main.js` (`npm run fake-elevenlabs`): runs the fake
 * ElevenLabs text-to-speech API of ./fake-elevenlabs.ts, for trying vagent's ElevenLabs voices
 * without an account (its audio is spoken by the embedded engine).
 *
 * Prints the two `export` lines for the shell that runs `vagent serve` on stdout
 * (`ELEVENLABS_API_KEY`, `VAGENT_ELEVENLABS_URL`), then one line per request on stderr (its path
 * and status, never the key nor the text).
 */
import { parseArgs } from 'node:util';
import { closeOnSignals, parsePort, restartNote, shellQuote, UsageError } from './cli.js';
import { startFakeElevenLabs } from './fake-elevenlabs.js';

const USAGE = `usage:
  fake-elevenlabs [--port 0] [--host 127.0.0.1] [--api-key K]
      serve a fake ElevenLabs text-to-speech API; prints the exports for \`vagent serve\``;

const OPTIONS = {
  port: { type: 'string' },
  host: { type: 'string' },
  'api-key': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

async function main(argv: string[]): Promise<number> {
  try {
    const { values } = parseArgs({ args: argv, options: OPTIONS });
    if (values.help) {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    const fake = await startFakeElevenLabs({
      apiKey: values['api-key'],
      host: values.host ?? '127.0.0.1',
      port: parsePort(values.port, 0),
      onRequest: (path, status) => process.stderr.write(`[fake-elevenlabs] POST ${path} → ${status}\n`),
    });
    process.stdout.write(`export ELEVENLABS_API_KEY=${shellQuote(fake.apiKey)}\nexport VAGENT_ELEVENLABS_URL=${shellQuote(fake.url)}\n`);
    process.stderr.write(`[fake-elevenlabs] listening on ${fake.url}/v1/text-to-speech/{voice_id}; Ctrl-C stops\n`);
    process.stderr.write(restartNote('fake-elevenlabs', 2));
    closeOnSignals('fake-elevenlabs', () => fake.close());
    return 0;
  } catch (err) {
    const usage = err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
    process.stderr.write(`fake-elevenlabs: ${(err as Error).message}${usage ? `\n${USAGE}` : ''}\n`);
    return usage ? 2 : 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
