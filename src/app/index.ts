/**
 * Wires the services of one daemon (or admin command) over an open store.
 */
import { Pricing } from '../config/pricing.js';
import type { RecognitionConfig } from '../adapters/recognizers/recognizer-choice.js';
import type { Repos } from '../store/index.js';
import { AgentService } from './agents.js';
import { NoLanguageModel, type LanguageModel } from './language-model.js';
import type { LlmFailure } from './llm-step.js';
import { BudgetService, type BudgetSettings } from './budget.js';
import { CallLineService } from './call-line.js';
import { CallService } from './calls.js';
import { CarrierService } from './carriers.js';
import { InboundService, type InboundLog, type RoutingWebhookCall } from './inbound.js';
import { NoTelephony, type TelephonyPort } from './telephony-port.js';
import { RetentionService } from './retention.js';
import { SessionService } from './sessions.js';
import { NoSpeech, type SpeechPort } from './speech-port.js';
import { IdempotencyService } from './idempotency.js';
import { MediaCallService } from './media-calls.js';
import { NumberService } from './numbers.js';
import { RecognizerCheckService } from './recognizer-check.js';
import { CredentialBox } from './secrets.js';
import { TenantService } from './tenants.js';
import { TrunkService } from './trunks.js';
import { UnitOfWork } from './unit-of-work.js';
import { EventLog } from './events.js';
import { WebhookDelivery, type DeliveryOptions } from './webhook-delivery.js';
import { WebhookService, type WebhookPort } from './webhooks.js';
import { RecordingService } from './recordings.js';

/** Everything the HTTP layer calls. */
export interface Services {
  repos: Repos;
  /** Call recordings in the state dir (docs/media.md "Recordings"). */
  recordings: RecordingService;
  tenants: TenantService;
  idempotency: IdempotencyService;
  /** Runs every use case's writes with its request's idempotent response (docs/unit-of-work.md). */
  uow: UnitOfWork;
  /** The event log (docs/events.md). */
  events: EventLog;
  trunks: TrunkService;
  numbers: NumberService;
  credentials: CredentialBox;
  agents: AgentService;
  sessions: SessionService;
  speech: SpeechPort;
  /** The language model (docs/llm.md); {@link NoLanguageModel} when none is configured. */
  languageModel: LanguageModel;
  /** Deadline of one model request, retries included, ms (`llm.timeout_ms`). */
  llmTimeoutMs: number;
  budget: BudgetService;
  calls: CallService;
  /** Hang-ups (`POST /v1/calls/{id}/hangup`; ending a dialled call's session). */
  callLines: CallLineService;
  inbound: InboundService;
  telephony: TelephonyPort;
  /** Retention purges (docs/api-decisions.md "Retention"). */
  retention: RetentionService;
  /** Calls carried by carrier WebSocket media streams (docs/media.md). */
  media: MediaCallService;
  /** Carrier credentials and media stream tokens (docs/carrier-auth.md). */
  carriers: CarrierService;
  /** Checks of the cloud speech recognisers (`vagent telephony check`). */
  recognizers: RecognizerCheckService;
  /** Webhook endpoints (docs/events.md "Webhooks"). */
  webhooks: WebhookService;
  /** The webhook fan-out and sender; the daemon starts and stops it. */
  webhookDelivery: WebhookDelivery;
}

/** Options of {@link createServices}. */
export interface ServiceOptions {
  authMode: 'audit' | 'enforce';
  masterKey: Buffer;
  idempotencyRetentionHours: number;
  /** How long events are kept, days (default 7; docs/events.md). */
  eventsRetentionDays?: number;
  /** Epoch seconds; injectable for tests. */
  nowS?: () => number;
  /** Speech synthesis and its cache (default: none, text-only replies). */
  speech?: SpeechPort;
  /** Deadline of one model request, ms (default 5000, `llm.timeout_ms`); also the whole model step's unless `llmDeadlineMs` is given. */
  llmTimeoutMs?: number;
  /** Prices (default: everything free). */
  pricing?: Pricing;
  /** The language model agents with an `llm` block call (default: none, {@link NoLanguageModel}; docs/llm.md). */
  languageModel?: LanguageModel;
  /** Deadline of a turn's whole model step, ms (default `llmTimeoutMs`, else 5000; docs/llm.md "Where the model acts"). */
  llmDeadlineMs?: number;
  /** Told of each model request that failed (the turn fell back to the rules), for the log (default: silent). */
  onLlmFailure?: (failure: LlmFailure) => void;
  /** Base URL of audio links, e.g. `http://127.0.0.1:8787` (default: that); read per request. */
  audioBaseUrl?: () => string;
  /** Told of synthesis failures, for the log. */
  onSpeechError?: (err: unknown) => void;
  /** Telephony provider (default: none; dialling fails with telephony_not_configured). */
  telephony?: TelephonyPort;
  /** Daily budget settings (default: no budget, Asia/Kolkata, ₹2 per call). */
  budget?: BudgetSettings;
  /** Calls tenants' inbound routing webhooks (default: always fails, so the bound agent answers). */
  routingWebhook?: RoutingWebhookCall;
  /** Log of inbound routing (default: silent). */
  inboundLog?: InboundLog;
  /** Bounds of the sessions held in memory (default: 50,000 open, 1,000 ended). */
  sessionCache?: SessionCacheBounds;
  /** The instance's `retention_days` (default 0: keep for ever; docs/api-decisions.md "Retention"). */
  retentionDays?: number;
  /** Sessions deleted per write by a purge (default `DEFAULT_BATCH_SIZE`; tests). */
  purgeBatchSize?: number;
  /** The state dir's `recordings/` (default: none, so no call is recorded; docs/media.md "Recordings"). */
  recordingsDir?: string;
  /** Disk cap of all recordings together, MB (default 0: none). */
  recordingsMaxMb?: number;
  /** The recognition settings (`recognizer`, `recognizers`, `deepgram`, `sarvam`), for the recognisers' checks (default: none configured). */
  recognition?: RecognitionConfig;
  /** Reaches webhook receivers (default: refuses every URL). */
  webhookPort?: WebhookPort;
  /** The webhook sender's concurrency, retry schedule and log (default: the worker's). */
  webhookDelivery?: DeliveryOptions;
}

/** How many sessions the session service holds in memory (see `SessionServiceOptions`). */
export interface SessionCacheBounds {
  /** Open sessions (least recently used beyond this reload from the database). */
  open?: number;
  /** Recently ended sessions (older ones reload from the database). */
  ended?: number;
}

/** Builds the services over `repos`. */
export function createServices(repos: Repos, options: ServiceOptions): Services {
  const nowS = options.nowS ?? (() => Date.now() / 1000);
  const credentials = new CredentialBox(options.masterKey);
  const idempotency = new IdempotencyService(repos, options.masterKey, options.idempotencyRetentionHours * 3600, nowS);
  const uow = new UnitOfWork(repos.store, idempotency);
  const events = new EventLog(repos, nowS, (options.eventsRetentionDays ?? 7) * 86400);
  const deps = { repos, uow, authMode: options.authMode, credentials, events, nowS };
  const trunks = new TrunkService(deps);
  const speech = options.speech ?? new NoSpeech();
  const pricing = options.pricing ?? new Pricing({ currency: 'INR', llm: {}, tts: {}, stt: {} });
  const languageModel = options.languageModel ?? new NoLanguageModel();
  const agents = new AgentService(deps, speech, {
    defaultModel: () => languageModel.defaultModel,
    priced: (model) => pricing.list.llm[model] !== undefined,
  });
  const budget = new BudgetService(deps, options.budget ?? { dailyBudgetInr: 0, timezone: 'Asia/Kolkata', callReservationInr: 2 });
  const deadlineMs = options.llmDeadlineMs ?? options.llmTimeoutMs;
  const sessions: SessionService = new SessionService(deps, agents, speech, pricing, {
    llm: {
      model: languageModel,
      budget,
      ...(deadlineMs !== undefined ? { deadlineMs } : {}),
      ...(options.onLlmFailure ? { onFailure: options.onLlmFailure } : {}),
    },
    budget,
    audioBaseUrl: options.audioBaseUrl ?? (() => 'http://127.0.0.1:8787'),
    ...(options.onSpeechError ? { onSpeechError: options.onSpeechError } : {}),
    ...(options.sessionCache?.open !== undefined ? { maxCached: options.sessionCache.open } : {}),
    ...(options.sessionCache?.ended !== undefined ? { maxEndedCached: options.sessionCache.ended } : {}),
    // Ending a dialled call's session hangs up its line (the call service is built below).
    closeLine: async (n) => (await callLines.releaseLine(n, false))?.record ?? null,
    // A call's end report names its recording (the service is built below).
    recordingUrl: (n) => recordings.urlOf(n),
  });
  const telephony = options.telephony ?? new NoTelephony();
  const callLines = new CallLineService(deps, sessions, telephony);
  const calls = new CallService(deps, agents, sessions, trunks, budget, telephony, callLines);
  const silent: InboundLog = { info: () => {}, warn: () => {} };
  const noWebhook: RoutingWebhookCall = async () => {
    throw new Error('inbound routing webhooks are not enabled');
  };
  const inbound = new InboundService(
    deps,
    sessions,
    calls,
    telephony,
    credentials,
    options.routingWebhook ?? noWebhook,
    options.inboundLog ?? silent,
  );
  const retention = new RetentionService(
    repos,
    {
      retentionDays: options.retentionDays ?? 0,
      ...(options.purgeBatchSize !== undefined ? { batchSize: options.purgeBatchSize } : {}),
      // Purged sessions read as missing from then on, not from the ended window in memory.
      onSessionsPurged: (ids) => {
        sessions.forget(ids);
        recordings.remove(ids);
      },
    },
    nowS,
  );
  const webhookPort = options.webhookPort ?? noWebhookPort;
  const webhooks = new WebhookService(deps, webhookPort);
  const recordings = new RecordingService(
    repos,
    options.recordingsDir ?? null,
    (options.recordingsMaxMb ?? 0) * 1024 * 1024,
    options.audioBaseUrl ?? (() => 'http://127.0.0.1:8787'),
  );
  calls.useRecordings((n) => recordings.urlOf(n));
  const media = new MediaCallService(deps, agents, sessions, calls, budget, inbound, speech, recordings);
  return {
    webhooks,
    webhookDelivery: new WebhookDelivery(deps, webhooks, webhookPort, options.webhookDelivery),
    media,
    carriers: new CarrierService(deps),
    recognizers: new RecognizerCheckService(options.recognition ?? null),
    retention,
    recordings,
    budget,
    calls,
    callLines,
    inbound,
    telephony,
    agents,
    sessions,
    speech,
    languageModel,
    llmTimeoutMs: options.llmTimeoutMs ?? 5000,
    repos,
    credentials,
    tenants: new TenantService(repos, nowS, (name) => events.forgetTenant(name)),
    idempotency,
    uow,
    events,
    trunks,
    numbers: new NumberService(deps, trunks, agents),
  };
}

/** The webhook port of services built without one (admin commands): every URL is refused. */
const noWebhookPort: WebhookPort = {
  checkUrl: () => Promise.reject(new Error('webhooks are not enabled here')),
  send: () => Promise.reject(new Error('webhooks are not enabled here')),
};
