/**
 * The `/v1` contract, written once: every request and response schema of the API, split by
 * resource, and the types inferred from them (`z.infer` for what is validated or answered,
 * `z.input` for a body as a client sends it, defaults not yet applied).
 *
 * The daemon's routes validate with these schemas and publish them as the OpenAPI document;
 * the services take the inferred inputs and build the inferred views; the client sends and
 * reads the same types. It depends on `zod` and src/domain only.
 */
export * from './answers.js';
export * from './common.js';
export * from './trunks.js';
export * from './numbers.js';
export * from './agents.js';
export * from './sessions.js';
export * from './calls.js';
export * from './telephony.js';
export * from './carriers.js';
export * from './health.js';
export * from './audio.js';
export type { CallSource, DialStatus, LineOutcome } from '../domain/calls.js';
export type { CostInr } from '../domain/money.js';
export * from './events.js';
export * from './webhooks.js';
