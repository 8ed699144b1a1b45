// Types of ./llm-stream-call.mjs (plain JavaScript, so that bench/llm-stream.mjs can import it too).
import type { SimClientOptions, SimPreparedLine } from '../../src/cli/simulator/sim-client.js';

export declare const QUESTION: string;

export declare function llmClinicAgent(id: string, llm?: Record<string, unknown>): Record<string, unknown> & { id: string };

export declare function askingCall(
  options: {
    daemonUrl: string;
    key: string;
    agentId: string;
    line: SimPreparedLine;
    heard?: string;
    waitMs?: number;
  } & Partial<SimClientOptions>,
): SimClientOptions;

export declare function storedTurnOfLastCall<T = Record<string, unknown>>(
  get: (path: string) => Promise<unknown>,
  heard: string,
  tries?: number,
): Promise<T | undefined>;
