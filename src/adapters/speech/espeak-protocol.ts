/**
 * The IPC messages between ./espeak.ts (parent) and ./espeak-worker.ts (child). Kept apart
 * from the worker so that importing them never starts a worker.
 */

/** Package name of the embedded engine (an optional dependency, GPL-3.0). */
export const ESPEAK_PACKAGE = '@echogarden/espeak-ng-emscripten';

/** A request from the parent: speak `text` (plain text) with eSpeak voice `voice`. */
export interface WorkerRequest {
  type: 'synthesize';
  id: number;
  text: string;
  voice: string;
}

/**
 * A message from the worker: `ready` once the engine is loaded (`startupMs` from process
 * start), `result` (mono PCM16 samples, 48 kHz) or `error` for request `id`, and `fatal` when the
 * engine cannot be loaded at all (the worker then exits).
 */
export type WorkerReply =
  | { type: 'ready' }
  | { type: 'result'; id: number; samples: Int16Array; sampleRate: number }
  | { type: 'error'; id: number; reason: 'failed'; message: string }
  | { type: 'fatal'; reason: 'unavailable'; message: string };
