/**
 * The slot types a step may capture (docs/agents.md) and the shape of their canonical values:
 * the one list the agent schema (./agent.ts) and the media expectations (./media.ts) both read.
 */

/** Slot types and their canonical values (docs/agents.md). */
export const SLOT_TYPES = ['yes_no', 'digits', 'number', 'amount', 'date', 'time', 'person_name', 'choice', 'text'] as const;
/** One of {@link SLOT_TYPES}. */
export type SlotType = (typeof SLOT_TYPES)[number];

/** A canonical slot value: yes_no → boolean; number, amount → number; every other type → string. */
export type SlotValue = boolean | number | string;
