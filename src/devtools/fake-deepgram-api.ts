/**
 * The fake Deepgram server's public interface: its options, the faults a test injects, what it
 * records (handshakes, connections, messages) and the {@link FakeDeepgram} handle. The server is
 * in src/devtools/fake-deepgram.ts.
 */

/** One scripted utterance: its text, or its text and confidence (0..1, default 0.95). */
export type FakeDeepgramUtterance = string | { text: string; confidence?: number };

/** A misbehaviour for one connection attempt (see {@link FakeDeepgram.faults}). */
export interface FakeDeepgramFault {
  /** Refuse the handshake with this HTTP status (e.g. 401, 403, 429, 500, 503). */
  reject?: number;
  /** Drop the TCP connection (no close frame) this many ms after the socket opened. */
  dropAfterMs?: number;
  /** Drop the TCP connection (no close frame) once this many audio bytes have arrived on it. */
  dropAfterBytes?: number;
  /** Hold every message to the client this many ms (a slow provider). */
  delayMs?: number;
}

/** Options of {@link startFakeDeepgram}. */
export interface FakeDeepgramOptions {
  /** The API key clients must send as `Authorization: Token <key>`. Default `dev-deepgram-key`. */
  apiKey?: string;
  /** Interface to listen on. Default `127.0.0.1`. */
  host?: string;
  /** TCP port; `0` (the default) picks a free one. */
  port?: number;
  /** Utterances in the order they are to be heard; more with {@link FakeDeepgram.enqueue}. */
  script?: readonly FakeDeepgramUtterance[];
  /** Frame RMS (of 32 767) above which a 10 ms frame counts as speech. Default 500 (about -36 dBFS). */
  speechLevel?: number;
  /** Close a connection with 1011 `NET-0001` after this many ms with neither audio nor a text frame. Default 10 000 (Deepgram's window). */
  idleTimeoutMs?: number;
  /** Faults for the next connection attempts, one taken per attempt; see {@link FakeDeepgram.faults}. */
  faults?: readonly FakeDeepgramFault[];
  /** Called for each handshake, accepted or refused (for the CLI's log). */
  onHandshake?: (handshake: FakeDeepgramHandshake) => void;
}

/** One handshake as the fake saw it; the `authorization` header is never recorded. */
export interface FakeDeepgramHandshake {
  /** The query parameters (repeated ones, e.g. `keyterm`, as arrays). */
  query: Record<string, string | string[]>;
  /** Request headers without `authorization`. */
  headers: Record<string, string | string[] | undefined>;
  /** The HTTP status answered: 101 when the socket opened. */
  status: number;
}

/** A control or unknown text message a client sent, in order of arrival. */
export interface FakeDeepgramMessage {
  /** Index of the connection in {@link FakeDeepgram.connections}. */
  connection: number;
  /** The `type` of a JSON message (`KeepAlive`, `Finalize`, `CloseStream`…), or `text` for anything else. */
  type: string;
  /** Audio bytes received on that connection before this message. */
  afterBytes: number;
}

/** An accepted connection. */
export interface FakeDeepgramConnection {
  /** The query parameters of its handshake. */
  query: Record<string, string | string[]>;
  /** Its request headers without `authorization`. */
  headers: Record<string, string | string[] | undefined>;
  /** Audio bytes received. */
  bytes: number;
  /** All audio received, concatenated (linear16 as sent). */
  audio(): Buffer;
  /** Messages sent to the client, parsed, in order. */
  sent: Array<Record<string, unknown>>;
  /** Whether the socket has closed. */
  closed: boolean;
}

/** A running fake Deepgram server. */
export interface FakeDeepgram {
  /** `ws://host:port/v1/listen`, the value of `VAGENT_DEEPGRAM_URL`. */
  readonly url: string;
  /** The API key it accepts. */
  readonly apiKey: string;
  /** Every handshake, accepted or refused, in order. */
  readonly handshakes: FakeDeepgramHandshake[];
  /** Accepted connections, in order. */
  readonly connections: FakeDeepgramConnection[];
  /** Text messages received on any connection, in order. */
  readonly messages: FakeDeepgramMessage[];
  /** Faults for the next connection attempts: each handshake with a valid key takes the first one (if any). Mutable. */
  faults: FakeDeepgramFault[];
  /** Hold every message to every client this many ms (on top of a fault's own). Mutable; default 0. */
  delayMs: number;
  /** Appends utterances to the script. */
  enqueue(...utterances: FakeDeepgramUtterance[]): void;
  /** Utterances not yet heard. */
  readonly remaining: number;
  /** Resolves once `predicate` holds, re-checked on every event of the fake; rejects after `timeoutMs` (default 5000). */
  until(predicate: () => boolean, timeoutMs?: number): Promise<void>;
  /** Closes every connection and the server. */
  close(): Promise<void>;
}
