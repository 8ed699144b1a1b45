/**
 * The scenario file of `vagent agent test` (docs/agent-tests.md): the agent file it tests, what
 * its sessions open with, and conversations — the caller's lines with what the agent must
 * answer, turn by turn and at the end. One zod schema; unknown keys are refused everywhere, so a
 * typo (`expcet:`, `reply_contain:`) is reported at its place in the file, like agent files.
 */
import { z } from 'zod';
import { ISO_TIME_PATTERN } from './time.js';
import { CONTEXT_KEY_PATTERN } from './agent.js';

/** Bounds that keep one scenario file small enough to run and report (hostile or mistaken files). */
export const SCENARIO_LIMITS = Object.freeze({
  /** Scenarios in one file. */
  scenarios: 200,
  /** Turns in one scenario. */
  turns: 100,
  /** Characters of one caller line: the `/v1` turn's limit (`MAX_TURN_TEXT`). */
  callerChars: 4000,
  /** Characters of a scenario name, an expected reply fragment or a regular expression. */
  textChars: 1000,
  /** Characters of a file path inside the file (`agent`, `audio`). */
  pathChars: 1000,
  /** Slots named in one `slots` expectation. */
  slots: 50,
});

const SLOT_NAME = /^[a-z][a-z0-9_]{0,63}$/;

/**
 * A map's error for a value of the wrong type only: zod's own words stay for its other issues
 * (an unknown key is reported as such, at the key).
 */
const notAMap = (message: string) => ({
  error: (issue: { code?: string }) => (issue.code === 'invalid_type' ? message : undefined),
});

const text = (name: string, max: number = SCENARIO_LIMITS.textChars) =>
  z
    .string({ error: `${name} must be a string` })
    .min(1, { error: `${name} must not be empty` })
    .max(max, { error: `${name} must be at most ${max} characters` });

/** A regular expression as written in a file: compiled here, so a bad one is refused where it is written. */
const RegexSource = text('reply_matches').superRefine((value, ctx) => {
  try {
    new RegExp(value, 'iu');
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: `not a valid regular expression: ${(err as Error).message}`, input: value });
  }
});

/** A slot's expected value: its canonical form (docs/agents.md "Capture and slot types"). */
const SlotValueSchema = z.union([z.string().max(SCENARIO_LIMITS.textChars), z.number(), z.boolean()], {
  error: 'a slot value must be a string, a number or true/false (the canonical form, e.g. 2026-11-20 for a date)',
});

const SlotsSchema = z
  .record(z.string().regex(SLOT_NAME, { error: 'a slot name is lowercase letters, digits and _' }), SlotValueSchema, {
    error: (issue) =>
      issue.code === 'invalid_type'
        ? 'slots must be a map of slot name to value'
        : issue.code === 'invalid_key'
          ? 'a slot name is lowercase letters, digits and _, starting with a letter'
          : undefined,
  })
  .refine((m) => Object.keys(m).length <= SCENARIO_LIMITS.slots, { error: `at most ${SCENARIO_LIMITS.slots} slots` });

const CostSchema = z
  .number({ error: 'max_cost_inr must be a number of rupees' })
  .min(0, { error: 'max_cost_inr must be 0 or more' })
  .max(1_000_000, { error: 'max_cost_inr must be at most 1000000' });

/** What one turn's reply must be; every field optional, all given must hold. */
export const TurnExpectSchema = z.strictObject(
  {
    /** Text (or texts) the reply contains, ignoring case. */
    reply_contains: z.union([text('reply_contains'), z.array(text('reply_contains')).min(1).max(20)]).optional(),
    /** A regular expression (JavaScript syntax, case-insensitive) the reply matches. */
    reply_matches: RegexSource.optional(),
    /** The step the agent is on after the reply (its id; `$closing` once the last step is done). */
    step: text('step', 64).optional(),
    /** The layer that decided the reply (`trace.layer`: `capture`, `confirm`, `faq`, `reprompt`, `control:goodbye`, …). */
    layer: text('layer', 64).optional(),
    /** Whether a language model was used for the reply (`trace.llm_used`). */
    llm_used: z.boolean({ error: 'llm_used must be true or false' }).optional(),
    /** Slots that hold these values after the turn (captured and confirmed); others are not checked. */
    slots: SlotsSchema.optional(),
    /** Whether the reply ends the conversation. */
    ended: z.boolean({ error: 'ended must be true or false' }).optional(),
    /** The turn's cost ceiling, in rupees. */
    max_cost_inr: CostSchema.optional(),
  },
  notAMap('expect must be a map of expectations (reply_contains, reply_matches, step, layer, slots, ended, …)'),
);
/** What one turn's reply must be. */
export type TurnExpect = z.infer<typeof TurnExpectSchema>;

/** One caller turn: a line of text, and optionally a WAV file of it (room for a voice run; a text run needs `caller`). */
export const ScenarioTurnSchema = z
  .strictObject(
    {
      caller: text('caller', SCENARIO_LIMITS.callerChars).regex(/\S/, { error: 'caller must not be blank' }).optional(),
      /** A WAV file of the caller's line, relative to the scenario file (not read by a text run). */
      audio: text('audio', SCENARIO_LIMITS.pathChars).optional(),
      expect: TurnExpectSchema.optional(),
    },
    notAMap('a turn must be a map with caller (or audio) and optional expect'),
  )
  .refine((t) => t.caller !== undefined || t.audio !== undefined, { error: 'a turn needs caller (text) or audio (a WAV file)' });
/** One caller turn. */
export type ScenarioTurn = z.infer<typeof ScenarioTurnSchema>;

/** What the whole conversation must come to, checked once the session has ended. */
export const ScenarioExpectSchema = z.strictObject(
  {
    /** The summary's outcome: `completed`, `partial`, `stopped`, `handoff` or `abandoned`. */
    outcome: z
      .enum(['completed', 'partial', 'stopped', 'handoff', 'abandoned'], {
        error: 'outcome must be one of completed, partial, stopped, handoff, abandoned',
      })
      .optional(),
    /** Slots the summary's `extracted` holds with these values; others are not checked. */
    slots: SlotsSchema.optional(),
    /** Whether the agent ended the conversation itself by the last turn. */
    ended: z.boolean({ error: 'ended must be true or false' }).optional(),
    /** The session's cost ceiling, in rupees. */
    max_cost_inr: CostSchema.optional(),
  },
  notAMap('expect must be a map of expectations (outcome, slots, ended, max_cost_inr)'),
);
/** What the whole conversation must come to. */
export type ScenarioExpect = z.infer<typeof ScenarioExpectSchema>;

const ContextSchema = z.record(z.string().regex(CONTEXT_KEY_PATTERN, { error: 'a context key is letters, digits and _' }), z.unknown(), {
  error: 'context must be a map of keys to values',
});
const NowSchema = z
  .string({ error: 'now must be an ISO 8601 time such as 2026-11-20T10:00:00+05:30' })
  .regex(ISO_TIME_PATTERN, { error: 'now must be an ISO 8601 time such as 2026-11-20T10:00:00+05:30' });
const CustomerNameSchema = text('customer_name', 200);

/** The session values a file or a scenario sets: a scenario's own replace the file's, key by key for `context`. */
const sessionFields = {
  /** The session's `customer_name`. */
  customer_name: CustomerNameSchema.optional(),
  /** The session's `context`. */
  context: ContextSchema.optional(),
  /** The session's "now" (`context.now`), for relative dates: set it, or "tomorrow" changes every day. */
  now: NowSchema.optional(),
};

/** One conversation. */
export const ScenarioSchema = z.strictObject(
  {
    name: text('name', 200),
    ...sessionFields,
    turns: z
      .array(ScenarioTurnSchema, { error: 'turns must be a list of caller turns' })
      .min(1, { error: 'turns must hold at least one turn' })
      .max(SCENARIO_LIMITS.turns, { error: `at most ${SCENARIO_LIMITS.turns} turns` }),
    expect: ScenarioExpectSchema.optional(),
  },
  notAMap('a scenario must be a map with name and turns'),
);
/** One conversation. */
export type Scenario = z.infer<typeof ScenarioSchema>;

/** A scenario file. */
export const ScenarioFileSchema = z
  .strictObject(
    {
      /** The agent file tested, relative to the scenario file. */
      agent: text('agent', SCENARIO_LIMITS.pathChars),
      ...sessionFields,
      scenarios: z
        .array(ScenarioSchema, { error: 'scenarios must be a list' })
        .min(1, { error: 'scenarios must hold at least one scenario' })
        .max(SCENARIO_LIMITS.scenarios, { error: `at most ${SCENARIO_LIMITS.scenarios} scenarios` }),
    },
    notAMap('a scenario file must be a map with agent and scenarios'),
  )
  .superRefine((f, ctx) => {
    const seen = new Set<string>();
    f.scenarios.forEach((s, i) => {
      if (seen.has(s.name))
        ctx.addIssue({ code: 'custom', path: ['scenarios', i, 'name'], message: `another scenario is named "${s.name}"`, input: s.name });
      seen.add(s.name);
    });
  });
/** A scenario file. */
export type ScenarioFile = z.infer<typeof ScenarioFileSchema>;

/** The outcome of {@link parseScenarioFile}: the file, or its issues with their field paths. */
export type ScenarioParseResult =
  { ok: true; file: ScenarioFile } | { ok: false; issues: Array<{ path: (string | number)[]; message: string }> };

/** Validates a parsed scenario file (never throws). */
export function parseScenarioFile(input: unknown): ScenarioParseResult {
  const r = ScenarioFileSchema.safeParse(input);
  if (r.success) return { ok: true, file: r.data };
  return {
    ok: false,
    issues: r.error.issues.map((i) => ({ path: i.path.map((p) => (typeof p === 'symbol' ? String(p) : p)), message: i.message })),
  };
}
