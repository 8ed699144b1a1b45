/**
 * Opens a state dir for use: directory (0700), master key, database with migrations,
 * services, the `default` tenant on a fresh dir, and recovery of crashed idempotency claims.
 * Used by the daemon and by the local `vagent admin` commands.
 */
import type { LanguageModel } from '../app/language-model.js';
import type { LlmFailure } from '../app/llm-step.js';
import type { Settings } from '../config/schema.js';
import { shippedPaths, statePaths } from '../config/paths.js';
import { loadPricing } from '../config/pricing.js';
import { loadAgentDir, type LoadedAgentFile } from '../app/agent-files.js';
import { createServices, type SessionCacheBounds, type Services } from '../app/index.js';
import type { DeliveryOptions } from '../app/webhook-delivery.js';
import type { SpeechPort } from '../app/speech-port.js';
import type { InboundLog, RoutingWebhookCall } from '../app/inbound.js';
import type { TelephonyPort } from '../app/telephony-port.js';
import { openRepos } from '../store/index.js';
import { ensureStateDir, loadMasterKey } from './state-dir.js';
import { webhookPortOf } from './webhooks.js';

/** An opened state dir. */
export interface Runtime {
  settings: Settings;
  services: Services;
  /** True when this open created tenant `default` (a fresh state dir). */
  fresh: boolean;
  /**
   * At open: idempotency claims released and dials left in flight marked unknown. Expired
   * idempotency records are not purged here (start-up stays flat in the table's size): the
   * daemon's background purge does it once listening.
   */
  recovered: { released: number; interruptedDials: number };
  /** Example agents loaded into tenant `default` (fresh state dir only). */
  examples: LoadedAgentFile[];
  close(): void;
}

/** Options of {@link openRuntime}. */
export interface RuntimeOptions {
  /** Release crashed idempotency claims (the daemon only); default true. */
  recover?: boolean;
  /** Speech synthesis and cache (the daemon's); default none. */
  speech?: SpeechPort;
  /** The language model agents with an `llm` block call (the daemon's, from `llm`; docs/llm.md); default none. */
  languageModel?: LanguageModel;
  /** Base URL of audio links, read per request. */
  audioBaseUrl?: () => string;
  /** Told of synthesis failures. */
  onSpeechError?: (err: unknown) => void;
  /** Clock in epoch seconds (tests). */
  nowS?: () => number;
  /** Telephony provider (the daemon's LiveKit); default none. */
  telephony?: TelephonyPort;
  /** Client of tenants' inbound routing webhooks. */
  routingWebhook?: RoutingWebhookCall;
  /** Log of inbound routing. */
  inboundLog?: InboundLog;
  /** Bounds of the sessions held in memory (tests); default the service's. */
  sessionCache?: SessionCacheBounds;
  /** The webhook sender's options (tests shorten the retry schedule); default the worker's. */
  webhookDelivery?: DeliveryOptions;
  /** Deadline of a turn's whole model step, ms; default `llm.timeout_ms`. */
  llmDeadlineMs?: number;
  /** Told of each model request that failed, for the log; default silent. */
  onLlmFailure?: (failure: LlmFailure) => void;
}

/**
 * Opens the state dir named by `settings.state_dir`.
 * @param options `recover: false` for admin commands (see above); default true.
 * @throws StateDirError for an unusable dir or master key; Error for a database it cannot migrate.
 */
export function openRuntime(settings: Settings, options: RuntimeOptions = {}): Runtime {
  ensureStateDir(settings.state_dir);
  const masterKey = loadMasterKey(settings.state_dir, settings.master_key);
  const repos = openRepos(statePaths(settings.state_dir).database);
  try {
    const services = createServices(repos, {
      authMode: settings.auth_mode,
      masterKey,
      idempotencyRetentionHours: settings.idempotency_retention_hours,
      eventsRetentionDays: settings.events_retention_days,
      retentionDays: settings.retention_days,
      recordingsDir: statePaths(settings.state_dir).recordings,
      recordingsMaxMb: settings.recordings_max_mb,
      pricing: loadPricing(settings.pricing_file ?? shippedPaths.pricing),
      ...(options.speech ? { speech: options.speech } : {}),
      ...(options.languageModel ? { languageModel: options.languageModel } : {}),
      llmTimeoutMs: settings.llm.timeout_ms,
      ...(options.audioBaseUrl ? { audioBaseUrl: options.audioBaseUrl } : {}),
      ...(options.onSpeechError ? { onSpeechError: options.onSpeechError } : {}),
      ...(options.nowS ? { nowS: options.nowS } : {}),
      ...(options.telephony ? { telephony: options.telephony } : {}),
      ...(options.routingWebhook ? { routingWebhook: options.routingWebhook } : {}),
      ...(options.inboundLog ? { inboundLog: options.inboundLog } : {}),
      ...(options.sessionCache ? { sessionCache: options.sessionCache } : {}),
      webhookPort: webhookPortOf(settings),
      ...(options.webhookDelivery ? { webhookDelivery: options.webhookDelivery } : {}),
      ...(options.llmDeadlineMs !== undefined ? { llmDeadlineMs: options.llmDeadlineMs } : {}),
      ...(options.onLlmFailure ? { onLlmFailure: options.onLlmFailure } : {}),
      budget: {
        dailyBudgetInr: settings.tenant_daily_budget_inr,
        timezone: settings.timezone,
        callReservationInr: settings.call_reservation_inr,
      },
      recognition: {
        recognizer: settings.recognizer,
        recognizers: settings.recognizers,
        deepgram: settings.deepgram,
        sarvam: settings.sarvam,
      },
    });
    const fresh = services.tenants.ensureDefaultTenant();
    const examples = fresh
      ? loadAgentDir(services.agents, (step) => services.uow.writeNow(step), 'default', settings.agents_dir ?? shippedPaths.agents)
      : [];
    // Only the lock-holding daemon may release claims: an admin command running beside a live
    // daemon must not free claims of requests that are still in flight.
    const recovered =
      options.recover === false
        ? { released: 0, interruptedDials: 0 }
        : { ...services.idempotency.recover(), interruptedDials: services.calls.recoverInterruptedDials() };
    return {
      settings,
      services,
      fresh,
      recovered,
      examples,
      // Watches of ringing calls stop before the store they write to closes.
      close: () => {
        services.callLines.stop();
        void services.webhookDelivery.stop();
        repos.store.close();
      },
    };
  } catch (err) {
    repos.store.close();
    throw err;
  }
}
