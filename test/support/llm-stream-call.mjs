/**
 * The call that both the streamed-reply test (test/cli/media-llm-stream.test.ts) and its benchmark
 * (bench/llm-stream.mjs) make (docs/media.md "The early clip"): an agent whose language model
 * answers off-script questions, a caller on a simulated Twilio line who asks one, and the turn the
 * daemon stored for it. Plain data and requests only, so each brings its own carrier simulator
 * (the test from src/, the benchmark from dist/). Types: ./llm-stream-call.d.mts.
 */

/** The off-script question the caller asks. */
export const QUESTION = 'can I bring my dog along';

/** The agent (the body of `PUT /v1/agents/{id}`): one date step, one FAQ, and the model `fake-llm`, with `llm` merged into its block. */
export function llmClinicAgent(id, llm = {}) {
  return {
    id,
    name: 'Clinic',
    direction: 'inbound',
    language: 'en-IN',
    opening: [{ text: 'Namaste, Sunrise Clinic.' }],
    steps: [{ id: 'day', ask: 'Which day would you like to come in?', capture: { slot: 'visit_date', type: 'date' }, max_attempts: 5 }],
    faq: [{ intent: 'fees', keywords: ['fee', 'fees'], answer: 'The fee is five hundred rupees.' }],
    closing: 'Goodbye!',
    llm: { model: 'fake-llm', instructions: 'Sunrise Clinic welcomes pets on a leash.', ...llm },
  };
}

/**
 * The options of the simulator's `simulateCall` for a Twilio call to `agentId`: the caller says
 * `line` (the fake recogniser hears `heard`), then waits up to `waitMs` before hanging up;
 * `timeoutMs` 60 s. Any other option (`replyQuietMs`, `replyTimeoutMs`, …) is passed through.
 */
export function askingCall({ daemonUrl, key, agentId, line, heard = QUESTION, waitMs = 40_000, ...rest }) {
  return {
    url: `${daemonUrl.replace(/^http/, 'ws')}/v1/media/twilio`,
    dialect: 'twilio',
    headers: { authorization: `Bearer ${key}` },
    customParameters: { agent_id: agentId, vagent_fake_transcripts: JSON.stringify([heard]) },
    steps: [
      { kind: 'say', prepared: line },
      { kind: 'wait', ms: waitMs },
      { kind: 'hangup', stop: true },
    ],
    timeoutMs: 60_000,
    ...rest,
  };
}

/**
 * The stored turn of the latest call whose `user_text` is `heard`, waiting for it (the caller may
 * hang up while the reply plays, before the turn is stored): up to `tries` reads 100 ms apart.
 * `get(path)` answers the parsed JSON of `GET path`. Resolves undefined when it never came.
 */
export async function storedTurnOfLastCall(get, heard, tries = 100) {
  const calls = await get('/v1/calls?limit=1');
  const sessionId = calls.data[0].session_id;
  for (let i = 0; i < tries; i++) {
    const detail = await get(`/v1/sessions/${sessionId}`);
    const turn = detail.turns.find((t) => t.user_text === heard);
    if (turn) return turn;
    await new Promise((r) => setTimeout(r, 100));
  }
  return undefined;
}
