/**
 * `vagent agent`, `vagent chat` and `vagent session` through the built binary against a real
 * daemon: local validation with file positions, apply/list/show/rm, a whole booking through
 * ag_clinic_booking (loaded from config/agents/ on first start) from piped stdin, JSON Lines,
 * and the error exit codes.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminKey, cleanupAll, freePort, requireBuild, runCli, startDaemon, tempDir, type Daemon } from '../support/daemon.js';

let daemon: Daemon;
let env: Record<string, string>;
let dir: string;

/** Runs a command with the daemon's URL and key in the environment. */
// eslint-disable-next-line no-control-regex -- the control characters no output may hold
const CONTROL = /[\u0000-\u0008\u001b\u007f-\u009f]/;
const vagent = (args: string[], input?: string) => runCli(args, { env, ...(input === undefined ? {} : { input }) });

const PHARMACY = `# A small inbound agent for the tests.
id: ag_cli_pharmacy
name: Pharmacy refill
direction: inbound
language: en-IN
opening:
  - text: "Hello, this is City Pharmacy."
  - text: "What is your name?"
    requires_user_input: true
steps:
  - id: name
    ask: "What is your name?"
    capture: { slot: customer, type: person_name }
  - id: refill
    ask: "Shall we refill your last order?"
    capture: { slot: refill, type: yes_no }
faq:
  - intent: timings
    keywords: [timing, open, hours]
    answer: "We are open eight to ten, every day."
closing: "Thank you. Goodbye!"
`;

/** The booking, one caller turn per line (the reference time is fixed with --now). */
const BOOKING = [
  'Priya Sharma',
  'yes',
  'tomorrow',
  'yes',
  'half past ten in the morning',
  'yes',
  '9876543210',
  'yes',
  'fever and cough',
  'thank you',
];
const NOW = '2025-11-13T10:00:00+05:30';

beforeAll(async () => {
  requireBuild();
  daemon = await startDaemon();
  env = { VAGENT_URL: daemon.url, VAGENT_API_KEY: await adminKey(daemon.stateDir, 'default') };
  dir = tempDir('vagent-agents-');
}, 30_000);
afterAll(cleanupAll, 30_000);

function write(name: string, text: string): string {
  const file = path.join(dir, name);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  return file;
}

describe('vagent agent', { timeout: 60_000 }, () => {
  it('lists the example agents loaded on first start', async () => {
    const res = await vagent(['agent', 'list']);
    expect(res.code, res.stderr).toBe(0);
    const lines = res.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+NAME\s+DIRECTION\s+LANGUAGE\s+VERSION\s+UPDATED$/);
    expect(lines.find((l) => l.startsWith('ag_clinic_booking '))).toMatch(
      /Clinic appointment booking\s+inbound\s+en-IN\s+1\s+\d{4}-\d\d-\d\d \d\d:\d\d$/,
    );
    const json = JSON.parse((await vagent(['agent', 'list', '--json'])).stdout);
    expect(json).toMatchObject({ has_more: false, next_cursor: null });
    const ids = json.data.map((a: { id: string }) => a.id);
    expect(ids).toEqual([...ids].sort());
    expect(ids).toContain('ag_clinic_booking');
  });

  it('applies a valid file, waits for pre-synthesis, and reports the version', async () => {
    const file = write('pharmacy.yaml', PHARMACY);
    const res = await vagent(['agent', 'apply', '-f', file]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/^✔ ag_cli_pharmacy applied \(version 1, \d+ clips pre-synthesised(, \d+ failed)?\)$/m);

    const again = await vagent(['agent', 'apply', '-f', file, '--json']);
    expect(again.code, again.stderr).toBe(0);
    const [agent] = JSON.parse(again.stdout);
    expect(agent).toMatchObject({
      id: 'ag_cli_pharmacy',
      name: 'Pharmacy refill',
      version: 1,
      direction: 'inbound',
      language: 'en-IN',
    });
    expect(agent.audio.ready + agent.audio.failed).toBe(agent.audio.total);
    expect(agent.audio.total).toBeGreaterThan(0);
    expect(agent.digest).toMatch(/^[0-9a-f]{64}$/);

    write('pharmacy.yaml', PHARMACY.replace('Thank you. Goodbye!', 'Thank you, take care. Goodbye!'));
    const changed = JSON.parse((await vagent(['agent', 'apply', '-f', file, '--json'])).stdout);
    expect(changed[0].version).toBe(2);
    expect(changed[0].digest).not.toBe(agent.digest);
  });

  it('refuses an invalid file with FILE:LINE:COL positions, sends nothing for it, and applies the valid one', async () => {
    const bad = write(
      'batch/a-bad.yaml',
      PHARMACY.replace('ag_cli_pharmacy', 'ag_cli_bad').replace('type: yes_no', 'type: yes_or_no') + 'colour: blue\n',
    );
    write(
      'batch/b-good.json',
      JSON.stringify(
        {
          id: 'ag_cli_json',
          name: 'JSON agent',
          direction: 'outbound',
          language: 'hi-IN',
          opening: [{ text: 'Namaste' }],
          closing: 'Dhanyavaad',
        },
        null,
        2,
      ),
    );
    write('batch/notes.txt', 'not an agent');
    const res = await vagent(['agent', 'apply', '-f', path.join(dir, 'batch')]);
    expect(res.code).toBe(1);
    const lines = PHARMACY.split('\n');
    const badLine = lines.findIndex((l) => l.includes('type: yes_no')) + 1;
    const badCol = lines[badLine - 1]!.indexOf('yes_no') + 1;
    expect(res.stderr).toContain(`${bad}:${badLine}:${badCol}: steps[1].capture.type: Invalid option: expected one of`);
    expect(res.stderr).toContain(`${bad}:${lines.length}:1: colour: unknown key`);
    expect(res.stderr).toMatch(/^error: 1 of 2 agent files not applied$/m);
    expect(res.stdout).toMatch(/^✔ ag_cli_json applied \(version 1, \d+ clips pre-synthesised(, \d+ failed)?\)$/m);

    const missing = await vagent(['agent', 'show', 'ag_cli_bad']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^error: not_found: /m);
  });

  it('warns (stderr, exit 0) at its line when llm.model has no price, and applies the agent', async () => {
    const text = PHARMACY.replace('ag_cli_pharmacy', 'ag_cli_llm').replace(
      'closing:',
      'llm:\n  model: my-local-llama\n  instructions: "We deliver within five kilometres."\nclosing:',
    );
    const file = write('llm.yaml', text);
    const lines = text.split('\n');
    const line = lines.findIndex((l) => l.includes('my-local-llama')) + 1;
    const col = lines[line - 1]!.indexOf('my-local-llama') + 1;
    const res = await vagent(['agent', 'apply', '-f', file, '--no-wait']);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toContain(`${file}:${line}:${col}: warning: llm.model: model my-local-llama has no price in the price list`);
    expect(res.stdout).toMatch(/ag_cli_llm applied/);
    const priced = await vagent(['agent', 'apply', '-f', write('llm2.yaml', text.replace('my-local-llama', 'gpt-4o-mini')), '--no-wait']);
    expect(priced.code, priced.stderr).toBe(0);
    expect(priced.stderr).not.toContain('warning');
  });

  it('warns (stderr, exit 0) about a {{context.x}} neither required nor defaulted, at its line', async () => {
    const text = PHARMACY.replace('ag_cli_pharmacy', 'ag_cli_ctx')
      .replace('"Shall we refill your last order?"', '"Shall we refill your order of {{context.medicine}} from {{context.branch}}?"')
      .replace('closing:', 'context_defaults: { branch: "our Baner store" }\nclosing:');
    const file = write('ctx.yaml', text);
    const lines = text.split('\n');
    const line = lines.findIndex((l) => l.includes('{{context.medicine}}')) + 1;
    const col = lines[line - 1]!.indexOf('"Shall') + 1;
    for (const args of [['--dry-run'], ['--no-wait']]) {
      const res = await vagent(['agent', 'apply', '-f', file, ...args]);
      expect(res.code, res.stderr).toBe(0);
      expect(res.stderr).toContain(
        `${file}:${line}:${col}: warning: steps[1].ask: {{context.medicine}} is neither in required_context nor in context_defaults`,
      );
      expect(res.stderr).not.toContain('context.branch');
    }
    const declared = write(
      'ctx.yaml',
      text.replace('branch: "our Baner store"', 'branch: "our Baner store", medicine: "your usual medicines"'),
    );
    const clean = await vagent(['agent', 'apply', '-f', declared, '--no-wait']);
    expect(clean.code, clean.stderr).toBe(0);
    expect(clean.stderr).not.toContain('warning');
  });

  it('--dry-run validates only', async () => {
    const file = write('dry.yaml', PHARMACY.replace('ag_cli_pharmacy', 'ag_cli_dry'));
    const res = await vagent(['agent', 'apply', '-f', file, '--dry-run']);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain('ag_cli_dry is valid');
    expect((await vagent(['agent', 'show', 'ag_cli_dry'])).code).toBe(1);
    const bad = write('dry-bad.yaml', PHARMACY.replace('direction: inbound', 'direction: sideways'));
    const badRes = await vagent(['agent', 'apply', '-f', bad, '--dry-run']);
    expect(badRes.code).toBe(1);
    expect(badRes.stderr).toContain(`${bad}:4:12: direction: Invalid option`);
  });

  it('shows an agent with its steps, as JSON, and as YAML that applies again unchanged', async () => {
    const show = await vagent(['agent', 'show', 'ag_cli_pharmacy']);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toMatch(/^id:\s+ag_cli_pharmacy$/m);
    expect(show.stdout).toMatch(/^version:\s+2$/m);
    expect(show.stdout).toMatch(/^audio:\s+\d+\/\d+ clips ready/m);
    expect(show.stdout).toMatch(/^faq:\s+timings$/m);
    expect(show.stdout).toMatch(/^needs:\s+-$/m);
    const delivery = await vagent(['agent', 'show', 'ag_delivery_confirmation']);
    expect(delivery.stdout).toMatch(/^needs:\s+context\.seller_name, context\.delivery_date, customer_name$/m);
    expect(delivery.stdout).toMatch(/^defaults:\s+-$/m);
    expect(show.stdout).toMatch(/^STEP\s+SLOT\s+TYPE\s+CONFIRM\s+OPTIONAL\s+ASK$/m);
    expect(show.stdout).toMatch(/^refill\s+refill\s+yes_no\s+-\s+no\s+Shall we refill your last order\?$/m);

    const json = JSON.parse((await vagent(['agent', 'show', 'ag_cli_pharmacy', '--json'])).stdout);
    expect(json).toMatchObject({ id: 'ag_cli_pharmacy', version: 2 });
    expect(json.definition.steps).toHaveLength(2);

    const yaml = await vagent(['agent', 'show', 'ag_cli_pharmacy', '--yaml']);
    expect(yaml.code).toBe(0);
    expect(parseYaml(yaml.stdout)).toEqual(json.definition);
    const file = write('roundtrip.yaml', yaml.stdout);
    const reapplied = JSON.parse((await vagent(['agent', 'apply', '-f', file, '--json'])).stdout);
    expect(reapplied[0].version).toBe(2);
  });

  it('removes an agent', async () => {
    const res = await vagent(['agent', 'rm', 'ag_cli_json', '--yes']);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain('agent ag_cli_json removed');
    const again = await vagent(['agent', 'rm', 'ag_cli_json', '--yes']);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^error: not_found: /m);
    const malformed = await vagent(['agent', 'show', 'clinic']);
    expect(malformed.code).toBe(1);
    expect(malformed.stderr).toMatch(/^error: workflow_not_found: /m);
  });
});

describe('vagent chat and vagent session', { timeout: 60_000 }, () => {
  let sessionId: string;

  it('books an appointment from piped stdin, one turn per line, and prints the summary at EOF', async () => {
    const res = await vagent(['chat', 'ag_clinic_booking', '--now', NOW], `${BOOKING.join('\n')}\n`);
    expect(res.code, res.stderr).toBe(0);
    const out = res.stdout;
    sessionId = /^session (se_\d+) · Clinic appointment booking \(ag_clinic_booking, en-IN\)$/m.exec(out)![1]!;
    expect(out).toMatch(/^agent › Namaste, this is Sunrise Clinic\. I can book an appointment for you\.$/m);
    expect(out).toMatch(/^you {3}› Priya Sharma$/m);
    expect(out).toMatch(/^agent › .*Priya Sharma.*· readback$/m);
    expect(out).toMatch(/^agent › 9 8 7 6 5 4 3 2 1 0 {2}· readback$/m);
    expect(out).toMatch(/^layer=\S+ · (<)?₹\d+\.\d\d · [\d.]+ m?s \(session (<)?₹\d+\.\d\d\)$/m);
    expect(out).toMatch(new RegExp(`^✔ session ${sessionId} ended$`, 'm'));
    expect(out).toMatch(/^outcome:\s+completed/m);
    expect(out).toMatch(/^ {2}patient_name\s+Priya Sharma$/m);
    expect(out).toMatch(/^ {2}visit_date\s+2025-11-14$/m);
    expect(out).toMatch(/^ {2}visit_time\s+10:30$/m);
    expect(out).toMatch(/^ {2}phone\s+9876543210$/m);
    expect(out).toMatch(/^cost:\s+(<)?₹\d+\.\d\d \(llm (<)?₹\d+\.\d\d,/m);
    expect(out).toMatch(new RegExp(`^outcome:\\s+completed \\(${BOOKING.length} turns\\)$`, 'm'));
  });

  it('session show reports the turns and costs; session end returns the same summary again', async () => {
    const show = await vagent(['session', 'show', sessionId]);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toMatch(new RegExp(`^session:\\s+${sessionId}$`, 'm'));
    expect(show.stdout).toMatch(new RegExp(`^turns:\\s+${BOOKING.length}$`, 'm'));
    expect(show.stdout).toMatch(/^cache hits:\s+\d+ \(\d+\.\d%\)$/m);
    const detail = JSON.parse((await vagent(['session', 'show', sessionId, '--json'])).stdout);
    expect(detail.session_id).toBe(Number(sessionId.slice(3)));
    expect(detail.turns).toHaveLength(BOOKING.length);

    const end = await vagent(['session', 'end', sessionId, '--json']);
    expect(end.code, end.stderr).toBe(0);
    const result = JSON.parse(end.stdout);
    expect(result).toMatchObject({ session_id: sessionId, ended: true, summary: { outcome: 'completed' } });
    expect(result.summary.extracted).toMatchObject({
      patient_name: 'Priya Sharma',
      visit_date: '2025-11-14',
      phone: '9876543210',
    });
    const human = await vagent(['session', 'end', sessionId]);
    expect(human.stdout).toMatch(/^outcome:\s+completed/m);
  });

  it('--json prints JSON Lines: the open response, each turn, then the end result', async () => {
    const res = await vagent(['chat', 'ag_cli_pharmacy', '--json'], 'Asha Rao\nare you open on sunday\n\nyes\n/state\n');
    expect(res.code, res.stderr).toBe(0);
    const lines = res.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(5);
    const [open, ...rest] = lines;
    expect(open).toMatchObject({ agent_id: 'ag_cli_pharmacy', agent: { id: 'ag_cli_pharmacy', direction: 'inbound' } });
    expect(open.opening.clips[1]).toMatchObject({ text: 'What is your name?', requires_user_input: true });
    const turns = rest.slice(0, 3);
    for (const t of turns)
      expect(Object.keys(t)).toEqual(expect.arrayContaining(['text', 'clips', 'state', 'trace', 'cost', 'session_totals']));
    expect(turns[1].clips.some((c: { source?: string; intent_key?: string }) => c.source === 'faq' && c.intent_key === 'timings')).toBe(
      true,
    );
    expect(turns[2].session_totals.turns).toBe(3);
    expect(rest[3]).toMatchObject({
      session_id: open.session_id,
      ended: true,
      summary: { extracted: { customer: 'Asha Rao', refill: true } },
    });
    expect(res.stderr).toContain('/state is ignored with --json');
  });

  it('/state and /end work in piped mode, and FAQ answers are marked', async () => {
    const res = await vagent(['chat', 'ag_cli_pharmacy'], 'Asha Rao\n/state\nwhen are you open\n/end\nnot sent\n');
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/^steps 1\/2 \(50%\)$/m);
    expect(res.stdout).toMatch(/^ {2}name\s+done$/m);
    expect(res.stdout).toMatch(/^› refill\s+pending$/m);
    expect(res.stdout).toMatch(/^agent › We are open eight to ten, every day\. {2}· faq:timings$/m);
    expect(res.stdout).not.toContain('not sent');
    expect(res.stdout).toMatch(/^outcome:\s+abandoned/m);
  });

  it('/state shows a value read back as awaiting confirmation; a run of one key is no name', async () => {
    const res = await vagent(['chat', 'ag_clinic_booking', '--now', NOW], `${'b'.repeat(3999)}\n/state\nPriya Sharma\n/state\n`);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).not.toMatch(/Bbbb/);
    expect(res.stdout).toMatch(/^agent › Sorry, I did not catch that\.$/m);
    expect(res.stdout).toMatch(/^› name\s+pending$/m);
    expect(res.stdout).toMatch(/^› name\s+awaiting confirmation: Priya Sharma$/m);
  });

  it('a line the daemon refuses in piped mode is told and skipped: the next lines are sent, the session ends as usual', async () => {
    const res = await vagent(['chat', 'ag_cli_pharmacy'], `Asha Rao\n${'a'.repeat(4001)}\nyes\n`);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toMatch(/^error: invalid_request: text must be at most 4000 characters/m);
    expect(res.stderr).toMatch(/^that line was not sent; going on with the next$/m);
    const id = /session (se_\d+) ended/.exec(res.stdout)![1]!;
    const detail = JSON.parse((await vagent(['session', 'show', id, '--json'])).stdout);
    expect(detail.turns.map((t: { user_text: string }) => t.user_text)).toEqual(['Asha Rao', 'yes']);
    expect(detail.session.status).toBe('ended');
  });

  it('caller text is shown with its control characters escaped, in chat and in events list', async () => {
    const res = await vagent(['chat', 'ag_cli_pharmacy'], 'प्रिया शर्मा 🙂\n\u0000\u0001\u001b[31mred\n');
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).not.toMatch(CONTROL);
    expect(res.stdout).toMatch(/^you {3}› प्रिया शर्मा 🙂$/m);
    expect(res.stdout).toContain('you   › \\x00\\x01\\x1b[31mred');
    const events = await vagent(['events', 'list', '--type', 'session.turn']);
    expect(events.code, events.stderr).toBe(0);
    expect(events.stdout).not.toMatch(CONTROL);
    expect(events.stdout).toContain('"\\x00\\x01\\x1b[31mred"');
  });

  it('--context @file.json is read as call place reads it; an unreadable file is exit 2', async () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'ctx.json'), '{"now": "2025-11-13T10:00:00+05:30"}');
    const ok = await vagent(['chat', 'ag_cli_pharmacy', '--context', `@${path.join(dir, 'ctx.json')}`, '--json'], '/end\n');
    expect(ok.code, ok.stderr).toBe(0);
    const missing = await vagent(['chat', 'ag_cli_pharmacy', '--context', `@${path.join(dir, 'nope.json')}`], '');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^error: cannot read --context file .*nope\.json: ENOENT$/m);
  });

  it('errors: unknown agent, malformed id, missing context, bad flags, unknown session, daemon down', async () => {
    const unknown = await vagent(['chat', 'ag_nope'], '');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^error: not_found: /m);
    const malformed = await vagent(['chat', 'clinic'], '');
    expect(malformed.code).toBe(1);
    expect(malformed.stderr).toMatch(/^error: workflow_not_found: /m);

    const needs = await vagent(['chat', 'ag_delivery_confirmation', '--context', '{"seller_name": "ShopKart"}'], 'yes\n');
    expect(needs.code).toBe(1);
    expect(needs.stderr).toMatch(
      /^error: invalid_request: agent ag_delivery_confirmation needs context\.delivery_date and customer_name: /m,
    );
    expect(needs.stderr).toContain(`add --customer-name "NAME" --context '{"delivery_date":"…"}'`);
    expect(needs.stdout).toBe('');
    const delivered = await vagent(
      [
        'chat',
        'ag_delivery_confirmation',
        '--customer-name',
        'Asha Rao',
        '--context',
        '{"seller_name": "ShopKart", "delivery_date": "tomorrow"}',
      ],
      'no\n',
    );
    expect(delivered.code, delivered.stderr).toBe(0);
    expect(delivered.stdout).toContain('Am I speaking with Asha Rao?');

    // Values the daemon would refuse: invalid_request and exit 1 whoever catches them.
    const context = await vagent(['chat', 'ag_clinic_booking', '--context', '[1]'], '');
    expect(context.code).toBe(1);
    expect(context.stderr).toContain('error: invalid_request: --context must be a JSON object');
    const now = await vagent(['chat', 'ag_clinic_booking', '--now', 'tomorrow'], '');
    expect(now.code).toBe(1);
    const phone = await vagent(['chat', 'ag_clinic_booking', '--customer-phone', '98765'], '');
    expect(phone.code).toBe(1);

    const session = await vagent(['session', 'show', 'se_12345']);
    expect(session.code).toBe(1);
    expect(session.stderr).toMatch(/^error: not_found: /m);
    const badSession = await vagent(['session', 'end', 'nope']);
    expect(badSession.code).toBe(1);
    expect(badSession.stderr).toMatch(/^error: session_not_found: /m);

    const down = { ...env, VAGENT_URL: `http://127.0.0.1:${await freePort()}` };
    for (const args of [
      ['chat', 'ag_clinic_booking'],
      ['agent', 'list'],
      ['agent', 'apply', '-f', path.join(dir, 'pharmacy.yaml')],
      ['session', 'show', 'se_1'],
    ]) {
      const res = await runCli(args, { env: down, input: 'hello\n' });
      expect(res.code, args.join(' ')).toBe(3);
      expect(res.stderr).toContain(down.VAGENT_URL);
    }
  });
});
