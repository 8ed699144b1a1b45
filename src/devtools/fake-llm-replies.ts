/**
 * What the fake model server (./fake-llm.ts) answers when no scripted rule matches, and how it
 * counts tokens — deterministic, so tests can assert exact usage and costs.
 *
 * - Plain request: the sentence of the system prompt and earlier messages (where an agent's
 *   instructions and FAQ answers are) sharing the most content words with the last user message;
 *   "do you take UPI?" gets the sentence about payments. None sharing a word: {@link NO_ANSWER}.
 * - `json_schema` request: an object of the schema's shape, each property filled from the last
 *   user message where it is obvious (a number, yes/no, an enum value named, a capitalised name, an
 *   ISO date), else null.
 * - Tokens: {@link tokenCount} is `ceil(characters / 4)`; a prompt is the sum over its messages of
 *   their content's count plus {@link MESSAGE_OVERHEAD_TOKENS}.
 */

/** Tokens each message adds to a prompt besides its content (its role and separators). */
export const MESSAGE_OVERHEAD_TOKENS = 4;

/** The plain reply when no sentence of the prompt shares a word with the question. */
export const NO_ANSWER = "I'm sorry, I don't have that information.";

/** One chat message as the fake reads it (content already reduced to text). */
export interface FakeMessage {
  role: string;
  content: string;
}

/** The fake's token count of a text: one token per 4 characters, rounded up. */
export function tokenCount(text: string): number {
  return Math.ceil(text.length / 4);
}

/** Prompt tokens of one message. */
export function messageTokens(m: FakeMessage): number {
  return tokenCount(m.content) + MESSAGE_OVERHEAD_TOKENS;
}

/** Words too common to say what a sentence is about. */
const STOP_WORDS = new Set(
  (
    'a an and are as at be but by can could do does did for from have has had how i if in is it its me my of on or ' +
    'our please so than that the their them then there these they this to us was we were what when where which who ' +
    'why will with would you your yours am any about tell know want need'
  ).split(' '),
);

/** A word's crude stem: a trailing `ing`, `ed` or plural `s` removed ("parking" and "park" meet). */
function stem(w: string): string {
  if (w.length > 5 && w.endsWith('ing')) return w.slice(0, -3);
  if (w.length > 4 && w.endsWith('ed')) return w.slice(0, -2);
  if (w.length > 3 && w.endsWith('s') && !w.endsWith('ss')) return w.slice(0, -1);
  return w;
}

/** The content words of `text`, lower-cased and stemmed. */
function contentWords(text: string): Set<string> {
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  return new Set(words.filter((w) => !STOP_WORDS.has(w)).map(stem));
}

/** Sentences of a text: split after `.`, `!`, `?` or a line break. */
function sentences(text: string): string[] {
  return (
    text
      .split(/(?<=[.!?])\s+|\n+/)
      // Without list marks and a leading label ("FAQ:", "Q:", "Payment:"), and said as a sentence
      // (capitalised): "Payment: cash and UPI." answers "Cash and UPI."
      .map((s) =>
        s
          .replace(/^[-*#>\s]+/, '')
          .replace(/^[\p{L}]{1,12}:\s+/u, '')
          .trim(),
      )
      .filter((s) => s.length > 0)
      .map((s) => s.charAt(0).toUpperCase() + s.slice(1))
  );
}

/** The plain default reply to `messages` (see the file's header). */
export function plainReply(messages: FakeMessage[]): string {
  const lastUser = [...messages].reverse().find((m) => m.role === 'user');
  if (!lastUser) return NO_ANSWER;
  const asked = contentWords(lastUser.content);
  let best: { sentence: string; score: number } | null = null;
  for (const m of messages) {
    if (m === lastUser) continue;
    for (const s of sentences(m.content)) {
      let score = 0;
      for (const w of contentWords(s)) if (asked.has(w)) score += 1;
      if (score > 0 && (best === null || score > best.score)) best = { sentence: s, score };
    }
  }
  return best?.sentence ?? NO_ANSWER;
}

/** A JSON Schema node as the fake reads it (only what it fills). */
interface SchemaNode {
  type?: string | string[];
  enum?: unknown[];
  format?: string;
  properties?: Record<string, SchemaNode>;
}

const YES = /\b(yes|yeah|yep|sure|correct|right|ok|okay|haan|ha)\b/i;
const NO = /\b(no|nope|not|don't|never|nahi)\b/i;
const NOT_NAMES = new Set(['I', 'OK', 'Okay', 'Yes', 'No', 'Hi', 'Hello', 'Please', 'Thanks', 'Thank']);

function types(node: SchemaNode): string[] {
  return node.type === undefined ? [] : Array.isArray(node.type) ? node.type : [node.type];
}

/** The value of one property, from `text` where obvious, else null. */
function fill(key: string, node: SchemaNode, text: string): unknown {
  const t = types(node);
  if (t.includes('object') && node.properties) return schemaReply(node, text);
  if (t.includes('array')) return [];
  if (node.enum) {
    const named = node.enum.find((v) => typeof v === 'string' && new RegExp(`\\b${escape(v)}\\b`, 'i').test(text));
    return named ?? null;
  }
  if (t.includes('integer') || t.includes('number')) {
    const n = /-?\d+(?:\.\d+)?/.exec(text.replace(/,(?=\d{3})/g, ''));
    if (!n) return null;
    return t.includes('integer') ? Math.trunc(Number(n[0])) : Number(n[0]);
  }
  if (t.includes('boolean')) return YES.test(text) ? true : NO.test(text) ? false : null;
  if (t.includes('string')) {
    if (node.format === 'date' || /date|day/i.test(key)) return /\b\d{4}-\d{2}-\d{2}\b/.exec(text)?.[0] ?? null;
    if (/name|person|recipient|who/i.test(key)) {
      const words = text.match(/\b\p{Lu}\p{Ll}+\b/gu) ?? [];
      const first = text.trim().split(/\s+/)[0];
      return words.find((w, i) => !NOT_NAMES.has(w) && !(i === 0 && w === first && words.length > 1)) ?? null;
    }
  }
  return null;
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The default answer to a `json_schema` request: `schema`'s properties filled from `text`. */
export function schemaReply(schema: unknown, text: string): Record<string, unknown> {
  const node = (typeof schema === 'object' && schema !== null ? schema : {}) as SchemaNode;
  const out: Record<string, unknown> = {};
  for (const [key, prop] of Object.entries(node.properties ?? {})) out[key] = fill(key, prop ?? {}, text);
  return out;
}
