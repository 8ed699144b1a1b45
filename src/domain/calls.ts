/**
 * Call constants shared by the daemon and the CLI (spec: Calls, `ringing_timeout_s` and
 * `max_call_duration_s`: "Type and default: not shown" — decided here, DESIGN.md §7).
 */

/** Bounds and defaults of the dial timers, in whole seconds. */
export const DIAL_LIMITS = {
  ringing_timeout_s: { min: 5, max: 120, default: 30 },
  max_call_duration_s: { min: 10, max: 21_600, default: 1800 },
} as const;
