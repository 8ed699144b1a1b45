/**
 * `node dist/devtools/fake-llm-main.js` (`npm run fake-llm`): runs the fake OpenAI-compatible
 * model server of ./fake-llm.ts, so vagent's LLM layer can be tried without a provider
 * (docs/llm.md "Trying it without a provider").
 *
 * Prints the `export` lines for the shell that runs `vagent serve` on stdout
 * (`VAGENT_LLM_BASE_URL`, `VAGENT_LLM_MODEL`), the one-line form on stderr, then one line per
 * request on stderr (status, stream or not, the rule that answered, tokens; never a key).
 */
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import YAML from 'yaml';
import { closeOnSignals, parsePort, restartNote, shellQuote, UsageError } from './cli.js';
import { parseRules, startFakeLlm, type FakeLlmRequest, type FakeLlmRule } from './fake-llm.js';

const USAGE = `usage:
  fake-llm [--port 8790] [--host 127.0.0.1] [--dialect openai|llamacpp] [--model NAME] [--rules FILE] [--api-key K]
      serve a fake OpenAI-compatible chat-completions endpoint at http://HOST:PORT/v1; prints the exports for \`vagent serve\`
      --dialect   how cached tokens are reported: openai (usage.prompt_tokens_details.cached_tokens, the default)
                  or llamacpp (timings.cache_n / prompt_n)
      --model     the model listed by GET /v1/models and exported as VAGENT_LLM_MODEL; default fake-llm
      --rules     scripted replies, a YAML or JSON list of {match, reply | json, delay_ms, chunk_delay_ms,
                  status, retry_after_ms, mode: hang|malformed|cut, times}; without one, every question is
                  answered from the prompt's own sentences
      --api-key   require this key (Authorization: Bearer); default none`;

const OPTIONS = {
  port: { type: 'string' },
  host: { type: 'string' },
  dialect: { type: 'string' },
  model: { type: 'string' },
  rules: { type: 'string' },
  'api-key': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

function readRules(file: string | undefined): FakeLlmRule[] {
  if (file === undefined) return [];
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read --rules ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = YAML.parse(text);
  } catch (err) {
    throw new UsageError(`--rules ${file} is not YAML or JSON: ${(err as Error).message}`);
  }
  const list = (parsed as { rules?: unknown } | null)?.rules ?? parsed ?? [];
  try {
    parseRules(list);
  } catch (err) {
    throw new UsageError(`--rules ${file}: ${(err as Error).message}`);
  }
  return list as FakeLlmRule[];
}

function requestLine(r: FakeLlmRequest): string {
  const u = r.usage ? ` prompt=${r.usage.prompt} cached=${r.usage.cached} completion=${r.usage.completion}` : '';
  return `[fake-llm] ${r.status === 0 ? 'no answer' : r.status} ${r.stream ? 'stream' : 'plain'} rule=${r.rule ?? 'default'}${u}`;
}

/** Runs the command line; returns the exit code (serving keeps the process alive after returning 0). */
async function main(argv: string[]): Promise<number> {
  let values: ReturnType<typeof parseArgs<{ options: typeof OPTIONS }>>['values'];
  try {
    values = parseArgs({ args: argv, options: OPTIONS }).values;
  } catch (err) {
    process.stderr.write(`fake-llm: ${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  try {
    const dialect = values.dialect ?? 'openai';
    if (dialect !== 'openai' && dialect !== 'llamacpp') throw new UsageError(`--dialect must be openai or llamacpp, got ${dialect}`);
    const rules = readRules(values.rules);
    const fake = await startFakeLlm({
      host: values.host ?? '127.0.0.1',
      port: parsePort(values.port, 8790),
      dialect,
      ...(values.model !== undefined ? { model: values.model } : {}),
      ...(values['api-key'] !== undefined ? { apiKey: values['api-key'] } : {}),
      rules,
      onRequest: (r) => process.stderr.write(`${requestLine(r)}\n`),
    });
    const exports = [`VAGENT_LLM_BASE_URL=${shellQuote(fake.url)}`, `VAGENT_LLM_MODEL=${shellQuote(fake.model)}`];
    if (values['api-key'] !== undefined) exports.push(`VAGENT_LLM_API_KEY=${shellQuote(values['api-key'])}`);
    process.stdout.write(exports.map((e) => `export ${e}`).join('\n') + '\n');
    process.stderr.write(`[fake-llm] listening on ${fake.url} (dialect ${dialect}, ${rules.length} scripted rule(s)); Ctrl-C stops\n`);
    process.stderr.write(`[fake-llm] or in one line: ${exports.join(' ')} vagent serve\n`);
    process.stderr.write(restartNote('fake-llm', exports.length));
    closeOnSignals(
      'fake-llm',
      () => fake.close(),
      () => ` after ${fake.requests.length} request(s)`,
    );
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`fake-llm: ${err.message}\n${USAGE}\n`);
      return 2;
    }
    process.stderr.write(`fake-llm: ${(err as Error).message}\n`);
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
