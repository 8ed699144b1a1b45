/**
 * `vagent chat AGENT_ID` (README.md "Agents and conversations"): a text conversation with an agent over the session
 * API (`POST /v1/sessions`, `/turn`, `/end`).
 *
 * - stdin and stdout are terminals: an interactive prompt with slash commands;
 * - otherwise: one turn per non-empty stdin line, the session ended at EOF; a line the daemon
 *   refuses (`invalid_request`, e.g. over 4,000 characters) is told on stderr and skipped;
 * - `--json`: JSON Lines — the open response, each turn result, then the end result.
 *
 * The agent can end the call (docs/api-decisions.md "Sessions", **Close-grace**): after its closing line
 * the session stays open for the agent's `close_grace_ms`. The chat ends with "the agent ended
 * the call" and the summary, exit 0, when a turn comes back `ended: true`, when that window
 * lapses with no new line, or when a turn finds the session already ended. Ctrl-C ends the
 * session too and prints the summary, then exits 130.
 */
import readline from 'node:readline';
import {
  type Agent,
  ApiResponseError,
  type Clip,
  type OpenSessionBody,
  type SessionOpened,
  type StepProgress,
  type TurnResult,
  type VagentClient,
} from '../../client/index.js';
import { isoTimeMs } from '../../domain/time.js';
import { AgentDefinitionSchema, type Messages } from '../../domain/agent.js';
import { messagesFor } from '../../engine/messages.js';
import { CURSOR_CLOSING } from '../../engine/state.js';
import type { CommandContext } from '../context.js';
import { InterruptedError, InvalidValueError } from '../errors.js';
import { requireE164 } from '../e164-arg.js';
import { explainMissingContext, parseContextFlag } from '../json-flag.js';
import { dim, hint, ok, printable, printError, printFields, printJsonLine, quoted, say } from '../output.js';
import { playUrls } from '../player.js';
import {
  costLine,
  printCallerLine,
  printChatHelp,
  printOpening,
  printStepProgress,
  printSummary,
  printTurn,
  valueOfReadback,
} from './chat-view.js';
import { checkId } from './ids.js';

/** Flags of `vagent chat`. */
export interface ChatFlags {
  /** A JSON object for the agent's templates, or `@file.json`. */
  context?: string;
  customerName?: string;
  /** E.164. */
  customerPhone?: string;
  /** ISO 8601 reference time; becomes `context.now`. */
  now?: string;
  title?: string;
}

/**
 * The `POST /v1/sessions` body for the flags.
 * @throws InvalidValueError (exit 1, invalid_request as from the daemon) for a `--context`
 *   that is not a JSON object, a `--now` that is not a date-time, or a `--customer-phone`
 *   that is not E.164
 */
export function sessionBody(agentId: string, flags: ChatFlags): OpenSessionBody {
  const body: OpenSessionBody = { agent_id: checkId('agent', agentId) };
  let context: Record<string, unknown> | undefined;
  if (flags.context !== undefined)
    context = parseContextFlag(flags.context, 'example: --context \'{"seller_name": "ShopKart"}\' or --context @context.json');
  if (flags.now !== undefined) {
    if (isoTimeMs(flags.now) === null) {
      throw new InvalidValueError(
        `--now must be an ISO 8601 date-time, not ${quoted(flags.now)}`,
        'context.now',
        'example: --now 2025-11-13T10:00:00+05:30',
      );
    }
    context = { ...context, now: flags.now };
  }
  if (flags.customerPhone !== undefined) requireE164(flags.customerPhone, '--customer-phone', 'customer_phone');
  if (context !== undefined) body.context = context;
  if (flags.customerName !== undefined) body.customer_name = flags.customerName;
  if (flags.customerPhone !== undefined) body.customer_phone = flags.customerPhone;
  if (flags.title !== undefined) body.title = flags.title;
  return body;
}

/** The audio URLs of clips that have audio, in order. */
const audioUrlsOf = (clips: Clip[] | undefined): string[] =>
  (clips ?? []).map((c) => c.audio_url).filter((u): u is string => typeof u === 'string');

/** What the loop does after a line: go on, end the session, or stop (the session is already gone). */
type Next = 'continue' | 'end' | 'stop';

/** Waited beyond the agent's close-grace window before ending the chat, ms (clock skew, the turn's own time). */
const GRACE_MARGIN_MS = 250;

/**
 * The agent's close-grace window in ms: its definition's `close_grace_ms`, or the default
 * the daemon applies when it is left out (docs/agents.md "Close grace").
 */
export function closeGraceMsOf(definition: Record<string, unknown> | undefined): number {
  const parsed = AgentDefinitionSchema.shape.close_grace_ms.safeParse(definition?.close_grace_ms);
  return parsed.success ? parsed.data : AgentDefinitionSchema.shape.close_grace_ms.parse(undefined);
}

/** One chat: the open session, the last reply's audio and progress, and the output mode. */
class Conversation {
  private readonly id: string;
  private lastAudio: string[];
  private progress: StepProgress | undefined;
  private cursor: string | undefined;
  private last: TurnResult | undefined;
  /** The agent has said its closing line (the close-grace window is running or over). */
  private agentClosed = false;
  /** Ends the chat when the close-grace window lapses with no new line. */
  private graceTimer: NodeJS.Timeout | undefined;
  /** The agent's definition, read once (the session keeps the agent it was opened with); undefined when it cannot be read. */
  private agent: Promise<Agent | undefined> | undefined;
  /** Ctrl-C ended the chat: the session is ended and summarised, then the command exits 130. */
  interrupted = false;

  constructor(
    private readonly client: VagentClient,
    private readonly agentId: string,
    opened: SessionOpened,
    private readonly json: boolean,
    private readonly interactive: boolean,
  ) {
    this.id = opened.session_id;
    this.progress = opened.state?.step_progress;
    this.cursor = opened.state?.cursor;
    this.lastAudio = audioUrlsOf(opened.opening?.clips);
  }

  /** Slash commands; `/end` also ends a `--json` chat, the others are for people. */
  private readonly commands: Record<string, () => Promise<Next> | Next> = {
    '/end': () => 'end',
    '/exit': () => 'end',
    '/quit': () => 'end',
    '/state': async (): Promise<Next> => {
      printStepProgress(this.progress, this.cursor, await this.awaitingConfirmation());
      return 'continue';
    },
    '/play': async (): Promise<Next> => {
      await this.play();
      return 'continue';
    },
    '/help': () => {
      printChatHelp();
      return 'continue';
    },
  };

  /** Reads lines until EOF, `/end` or an ended reply, then ends the session and shows the summary. */
  async run(): Promise<void> {
    const rl = readline.createInterface(
      this.interactive
        ? { input: process.stdin, output: process.stdout, terminal: true, prompt: dim('you   › ') }
        : { input: process.stdin, terminal: false },
    );
    // Ctrl-C: at the prompt readline sees it (the terminal is raw); piped, it is the signal.
    const onInterrupt = (): void => {
      this.interrupted = true;
      rl.close();
    };
    rl.on('SIGINT', onInterrupt);
    process.once('SIGINT', onInterrupt);
    let next: Next | undefined;
    let lapsed = false;
    try {
      if (this.interactive) rl.prompt();
      for await (const raw of rl) {
        this.stopGraceTimer();
        const line = raw.trim();
        const step = line === '' ? 'continue' : line.startsWith('/') ? await this.command(line) : await this.turn(line);
        if (step !== 'continue') {
          next = step;
          break;
        }
        if (this.agentClosed)
          await this.startGraceTimer(() => {
            lapsed = true;
            rl.close();
          });
        if (this.interactive) rl.prompt();
      }
    } finally {
      this.stopGraceTimer();
      process.removeListener('SIGINT', onInterrupt);
      rl.close();
    }
    // EOF or Ctrl-D/Ctrl-C at the prompt, or the grace window lapsed: leave the prompt's line.
    if (next === undefined && this.interactive) say();
    if (lapsed && !this.json) say(dim('(no reply within the close-grace window)'));
    next ??= 'end';
    if (next === 'end') await this.end();
  }

  /** Starts the close-grace timer (once per closing line): `onLapse` runs when it lapses. */
  private async startGraceTimer(onLapse: () => void): Promise<void> {
    if (this.graceTimer) return;
    // An agent that cannot be read (deleted meanwhile) gets the default window.
    const agent = await this.agentOnce();
    this.graceTimer ??= setTimeout(onLapse, closeGraceMsOf(agent?.definition) + GRACE_MARGIN_MS);
  }

  private agentOnce(): Promise<Agent | undefined> {
    this.agent ??= this.client.getAgent(this.agentId).catch(() => undefined);
    return this.agent;
  }

  private stopGraceTimer(): void {
    clearTimeout(this.graceTimer);
    this.graceTimer = undefined;
  }

  private async command(line: string): Promise<Next> {
    const name = line.split(/\s+/)[0]!.toLowerCase();
    const run = this.commands[name];
    if (!run) {
      hint(`unknown command ${printable(name)}; /help lists them`);
      return 'continue';
    }
    if (this.json && !['/end', '/exit', '/quit'].includes(name)) {
      hint(`${printable(name)} is ignored with --json`);
      return 'continue';
    }
    return run();
  }

  private async turn(text: string): Promise<Next> {
    if (!this.json && !this.interactive) printCallerLine(text);
    let turn: TurnResult;
    try {
      turn = await this.client.turn(this.id, { text });
    } catch (err) {
      if (!(err instanceof ApiResponseError)) throw err;
      // Closed by the engine (the close-grace window lapsed) or by `/end` elsewhere: not an
      // error of this chat; the summary follows.
      if (err.code === 'session_already_ended') {
        this.agentClosed ||= this.cursor === CURSOR_CLOSING;
        if (!this.agentClosed && !this.json) say(dim(`session ${this.id} had already ended`));
        return 'end';
      }
      const gone = err.code === 'session_not_found';
      if (this.interactive) {
        printError(err);
        return gone ? 'stop' : 'continue';
      }
      // A line the daemon refuses (too long, say) changed nothing: the session goes on with the
      // next line, as at the prompt; the refusal is told on stderr.
      if (err.code === 'invalid_request') {
        printError(err, this.json);
        if (!this.json) hint('that line was not sent; going on with the next');
        return 'continue';
      }
      if (!gone) hint(`session ${this.id} is still open; end it with: vagent session end ${this.id}`);
      throw err;
    }
    this.last = turn;
    this.progress = turn.state?.step_progress;
    this.cursor = turn.state?.cursor;
    this.lastAudio = turn.audio_url ? [turn.audio_url] : audioUrlsOf(turn.clips);
    if (this.json) printJsonLine(turn);
    else printTurn(turn);
    if (turn.ended || this.cursor === CURSOR_CLOSING) this.agentClosed = true;
    return turn.ended ? 'end' : 'continue';
  }

  /**
   * What the current step awaits the caller's yes to, when the last reply read a value back and
   * the step is not settled: the keyed digits, else the value the readback line says.
   */
  private async awaitingConfirmation(): Promise<string | undefined> {
    const clips = this.last?.clips ?? [];
    if (this.cursor === undefined || this.progress?.steps[this.cursor] !== 'pending') return undefined;
    const digits = clips.filter((c) => c.is_digit);
    if (digits.length > 0) return digits.map((c) => c.text).join('');
    const readback = clips.find((c) => c.is_readback);
    if (!readback) return undefined;
    const agent = await this.agentOnce();
    const def = agent?.definition ?? {};
    const language = typeof def.language === 'string' ? def.language : (agent?.language ?? 'en-IN');
    const lines = messagesFor({ language, messages: (def.messages ?? {}) as Messages });
    return valueOfReadback(readback.text, [lines.readback, lines.heard_readback]);
  }

  private async play(): Promise<void> {
    if (this.lastAudio.length === 0) {
      hint('the last reply has no audio (synthesis failed or was skipped)');
      return;
    }
    let why: string;
    try {
      const res = await playUrls(this.lastAudio, (u) => this.client.downloadAudio(u));
      if (res.played) return;
      why = 'no audio player found (tried aplay, paplay, afplay, play, ffplay)';
    } catch (err) {
      why = `could not play it (${(err as Error).message})`;
    }
    say(dim(`${why}; the audio is at:`));
    for (const u of this.lastAudio) say(new URL(u, `${this.client.url}/`).toString());
  }

  /** `POST /end` and the summary; a session the engine already closed is reported from the last totals. */
  private async end(): Promise<void> {
    if (this.agentClosed && !this.json) say(dim('the agent ended the call'));
    try {
      const res = await this.client.endSession(this.id);
      if (this.json) printJsonLine(res);
      else printSummary(res);
    } catch (err) {
      if (!(err instanceof ApiResponseError) || err.code !== 'session_already_ended') throw err;
      if (this.json) return;
      ok(`session ${this.id} ended`);
      if (this.last) printFields([['cost', costLine(this.last.session_totals)]]);
    }
  }
}

/**
 * `vagent chat AGENT_ID`: opens a session and converses (see the module comment for the modes).
 * @throws CliError (exit 1) with the flags to add when the agent needs context or a customer name.
 */
export async function chat(ctx: CommandContext, agentId: string, flags: ChatFlags): Promise<void> {
  const body = sessionBody(agentId, flags);
  const client = await ctx.client();
  const opened = await client.openSession(body).catch((err: unknown) => {
    throw explainMissingContext(err);
  });
  const interactive = !ctx.json && process.stdin.isTTY === true && process.stdout.isTTY === true;
  if (ctx.json) printJsonLine(opened);
  else printOpening(opened, interactive);
  const conversation = new Conversation(client, agentId, opened, ctx.json, interactive);
  await conversation.run();
  if (conversation.interrupted) throw new InterruptedError(`session ${opened.session_id} was ended`);
}
