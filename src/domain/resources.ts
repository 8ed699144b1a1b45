/**
 * The public shapes of `/v1` resources, now inferred from the contract's schemas
 * (src/contract). Kept only so existing importers compile: import from src/contract instead;
 * this file goes once none is left.
 */
export type {
  Agent,
  AgentAudioProgress,
  AgentSummary,
  CallHangup,
  CallPlacement,
  CallStatus,
  CarrierList,
  CarrierView,
  Clip,
  CostInr,
  DialStatus,
  LineOutcome,
  ListResponse,
  NumberRecord,
  SessionDetail,
  SessionEndResult,
  SessionListItem,
  SessionOpened,
  SessionRecord,
  SessionStepView,
  SessionSummary,
  SessionTotals,
  StepProgress,
  Trunk,
  TurnResult,
  TurnState,
  TurnTrace,
} from '../contract/index.js';
