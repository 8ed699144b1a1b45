/**
 * `vagent serve`: the daemon's lifecycle (README.md "Operating the daemon") — lock the state dir,
 * open it, listen, log JSON to stdout, drain and close on SIGTERM/SIGINT.
 */
import { voiceFailureMessage } from '../domain/voice.js';
import pino from 'pino';
import { defaultStateDir, shippedPaths, statePaths } from '../config/paths.js';
import { cloudVoices, openSpeech } from './speech.js';
import { resolveAudioCacheCap } from '../adapters/speech/cache-limits.js';
import { clientUrl, httpUrl, type Settings } from '../config/schema.js';
import { loginUrl, writeDaemonAddress, type DaemonAddress } from '../config/daemon-address.js';
import { auditModeNotice, llmNotice, llmPriceNotice, retentionNotice, telephonyNotice, vacuumNotice } from '../config/notices.js';
import { llmFailureLog, openLanguageModel } from './language-model.js';
import { loadPricing } from '../config/pricing.js';
import { autoVacuumMode, databaseBytes } from '../store/space.js';
import { acquireDaemonLock, ensureStateDir } from './state-dir.js';
import { vagentVersion } from '../version.js';
import { buildApp, LOG_REDACT_PATHS, LOG_SERIALIZERS } from '../http/app.js';
import { startBackgroundTasks, type BackgroundTaskOptions, type BackgroundTasks } from './background.js';
import { openRuntime, type RuntimeOptions } from './runtime.js';
import { startMedia, type RunningMedia } from './media-runtime.js';
import { DEFAULT_WEBHOOK_TIMEOUT_MS, postSignedJson } from '../adapters/webhook/routing-webhook.js';
import { webhookAllowNotice } from './webhooks.js';

/** Wait after start before the first retention pass, ms. */
const RETENTION_FIRST_DELAY_MS = 10_000;
/** Wait between retention passes, ms. */
const RETENTION_INTERVAL_MS = 10 * 60_000;

/**
 * The development room driver, when the daemon's environment asks for it: `VAGENT_DEV_FAKE_ROOMS=1`
 * (a development aid printed by `npm run fake-livekit`, not a setting) joins LiveKit call rooms
 * with the fake LiveKit's driver (src/devtools/room-fake.ts) instead of rtc-node's; docs/media.md,
 * "Try it without LiveKit". @returns that module's URL, or undefined (rtc-node).
 */
export function devRoomDriver(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return env['VAGENT_DEV_FAKE_ROOMS'] === '1' ? new URL('../devtools/room-fake.js', import.meta.url).href : undefined;
}

/** A running daemon. */
export interface RunningDaemon {
  /** `http://host:port` actually bound. */
  url: string;
  /** Drains in-flight requests, closes the database and releases the lock. */
  stop(): Promise<void>;
}

/**
 * Starts the daemon.
 * @param say Where human hints go (stderr by default); logs go to stdout as JSON.
 * @param clock The services' clock (`vagent agent test --voice` sets a scenario's `now`); default the system's.
 * @throws StateDirError when another daemon holds the state dir; ConfigError/Error otherwise.
 */
export async function startDaemon(
  settings: Settings,
  say: (line: string) => void = (l) => process.stderr.write(`${l}\n`),
  background: BackgroundTaskOptions = {},
  clock: Pick<RuntimeOptions, 'nowS'> = {},
): Promise<RunningDaemon> {
  ensureStateDir(settings.state_dir);
  const lock = acquireDaemonLock(settings.state_dir);
  // Log lines are written synchronously: none is lost to a kill -9, and none is left buffered at
  // exit, where flushing an asynchronous destination whose reader has gone (EPIPE) retries for
  // ever (sonic-boom's flushSync) and the daemon never exits. A broken pipe silences the log
  // (pino's own EPIPE handling) and the daemon keeps serving.
  const logger = pino(
    {
      level: settings.log_level,
      redact: { paths: LOG_REDACT_PATHS, censor: '[redacted]' },
      serializers: { ...LOG_SERIALIZERS, err: pino.stdSerializers.err },
      base: { pid: process.pid },
    },
    pino.destination({ dest: 1, sync: true }),
  );
  // Audio links use the public URL, or the address the daemon really bound (known after listen).
  let audioBase = settings.public_url?.replace(/\/+$/, '') ?? clientUrl(settings.host, settings.port);
  // The cap on the audio cache's dynamic clips: the setting, or a share of the state dir's disk.
  const audioCap = resolveAudioCacheCap(settings.audio_cache_max_mb, settings.state_dir);
  let runtime;
  let speech;
  try {
    const cloud = cloudVoices(settings);
    const opened = await openSpeech(
      settings.speech,
      settings.state_dir,
      settings.speech_timeout_ms,
      {
        maxBytes: audioCap.bytes,
        keepMs: settings.audio_url_keep_hours * 3_600_000,
        onWarning: (message, details) => logger.warn(details, message),
      },
      cloud,
      // Provider and reason only (never the key or the text); at most once a minute per pair.
      ({ provider, reason, suppressed }) =>
        logger.warn(
          { provider, reason, ...(suppressed > 0 ? { suppressed } : {}) },
          `cloud voice failed: ${voiceFailureMessage(`fallback:${provider}:${reason}`) ?? `${provider} (${reason})`}; the embedded voice spoke instead`,
        ),
    );
    speech = opened.speech;
    if (!speech) say(`No audio: ${opened.reason}. Replies are text only.`);
    else if (cloud.length > 0)
      say(`Cloud voices: ${cloud.map((c) => c.provider).join(', ')} (the embedded voice speaks a clip they fail).`);
    const lk = settings.livekit;
    // The LiveKit SDK (and its protobuf types) is loaded only when LiveKit is configured.
    const telephony =
      lk.url && lk.api_key && lk.api_secret
        ? new (await import('../adapters/livekit/telephony.js')).LiveKitTelephony({
            url: lk.url,
            apiKey: lk.api_key,
            apiSecret: lk.api_secret,
            agentName: lk.agent_name,
            requestTimeoutS: lk.request_timeout_s,
            waitUntilAnswered: lk.wait_until_answered,
          })
        : undefined;
    const policy = {
      allowHttp: settings.inbound_webhook_allow_http,
      allowPrivate: settings.inbound_webhook_allow_private,
      timeoutMs: DEFAULT_WEBHOOK_TIMEOUT_MS,
    };
    runtime = openRuntime(settings, {
      ...clock,
      ...(telephony ? { telephony } : {}),
      routingWebhook: (url, payload, secret, eventId) =>
        postSignedJson(url, payload, secret, policy, { userAgent: `vagent/${vagentVersion()}`, eventId }),
      inboundLog: logger.child({ component: 'inbound' }),
      webhookDelivery: { log: logger.child({ component: 'webhooks' }) },
      ...(speech ? { speech } : {}),
      languageModel: await openLanguageModel(settings.llm),
      onLlmFailure: llmFailureLog(logger, settings.llm),
      audioBaseUrl: () => audioBase,
      onSpeechError: (err) =>
        logger.warn({ reason: (err as { reason?: string }).reason ?? 'failed' }, 'speech synthesis failed; reply sent without audio'),
    });
  } catch (err) {
    await speech?.close();
    lock.release();
    throw err;
  }
  runtime.services.repos.store.startBackgroundCheckpoints();
  speech?.cache.startMaintenance();
  for (const f of runtime.examples) {
    if (f.error) logger.warn({ file: f.file, error: f.error }, 'example agent not loaded');
  }
  // Carrier media streams (docs/media.md): worker threads carry call audio off this event loop.
  let media: RunningMedia | null = null;
  try {
    media = await startMedia(settings, runtime.services, logger.child({ component: 'media' }), { roomDriver: devRoomDriver() });
  } catch (err) {
    logger.error({ err }, 'media workers did not start; /v1/media/* answers 503 and calls carry no audio');
    say(`No call audio: the media workers did not start (${(err as Error).message}).`);
  }
  const app = await buildApp({
    services: runtime.services,
    bodyLimitBytes: settings.body_limit_bytes,
    logger,
    version: vagentVersion(),
    checkResponses: false,
    media: () => media?.streams ?? null,
    publicUrl: settings.public_url ?? null,
    health: (language) =>
      media?.health(language) ?? {
        recognition: { status: 'off' as const, provider: null, reason: 'the media workers are not running' },
      },
  });
  // Retention (docs/api-decisions.md "Retention"): soon after start, then every ~10 minutes, in small batches.
  const retention = runtime.services.retention.startBackground({
    firstDelayMs: RETENTION_FIRST_DELAY_MS,
    intervalMs: RETENTION_INTERVAL_MS,
    onPurged: (c) =>
      logger.info(
        {
          sessions: c.sessions,
          turns: c.turns,
          calls: c.calls,
          telephony_events: c.telephony_events,
          audit_events: c.audit_events,
          agent_revisions: c.agent_revisions,
        },
        'retention: old records purged',
      ),
    onError: (err) => logger.error({ err }, 'retention purge failed'),
  });

  try {
    await app.listen({ host: settings.host, port: settings.port });
  } catch (err) {
    await media?.stop();
    await speech?.cache.stopMaintenance();
    await retention.stop();
    await runtime.services.repos.store.stopBackgroundCheckpoints();
    runtime.close();
    await speech?.close();
    lock.release();
    throw err;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : settings.port;
  const url = httpUrl(settings.host, port);
  if (!settings.public_url) audioBase = clientUrl(settings.host, port);
  // Static texts of every agent: synthesised in the background, so most replies are cache hits.
  if (speech) {
    runtime.services.agents.presynthesizeAll().catch((err: unknown) => logger.warn({ err }, 'pre-synthesis failed'));
  }
  const resumed = runtime.services.inbound.resumePending();
  // Webhook deliveries (docs/events.md "Webhooks") resume from the store's queue.
  runtime.services.webhookDelivery.start();
  // Expired idempotency records are purged from now on, in small batches, and freed pages given back.
  const tasks: BackgroundTasks = startBackgroundTasks(runtime, logger, background);
  const { store } = runtime.services.repos;
  if (store.convertedAtOpen)
    logger.info({ bytes: databaseBytes(store.db) }, 'database converted to incremental auto-vacuum (compacted once)');
  const spaceNotice = autoVacuumMode(store.db) === 'none' ? vacuumNotice(settings.state_dir, databaseBytes(store.db)) : null;
  if (spaceNotice) logger.warn({ database: statePaths(settings.state_dir).database, auto_vacuum: 'none' }, spaceNotice);
  logger.info(
    {
      url,
      state_dir: settings.state_dir,
      auth_mode: settings.auth_mode,
      version: vagentVersion(),
      claims_released: runtime.recovered.released,
      interrupted_dials: runtime.recovered.interruptedDials,
      telephony_events_resumed: resumed,
      telephony: runtime.services.telephony.configured ? 'livekit' : 'none',
      llm: runtime.services.languageModel.configured ? (runtime.services.languageModel.defaultModel ?? 'per agent') : 'off',
      audio_cache_max_bytes: audioCap.bytes,
      audio_cache_cap_source: audioCap.source,
      audio_url_keep_hours: settings.audio_url_keep_hours,
    },
    'vagent listening',
  );
  if (runtime.recovered.interruptedDials > 0) {
    logger.warn(
      { calls: runtime.recovered.interruptedDials },
      'dials in flight when vagent last stopped are marked unknown and will not be dialled again',
    );
  }

  // Local commands (`vagent admin key create`) name this address in their hints.
  const recorded: DaemonAddress = {
    url: clientUrl(settings.host, port),
    public_url: settings.public_url ?? null,
    auth_mode: settings.auth_mode,
    pid: process.pid,
    started_at: new Date().toISOString(),
  };
  try {
    writeDaemonAddress(settings.state_dir, recorded);
  } catch (err) {
    logger.warn({ err }, 'could not record the daemon address in the state dir; vagent admin hints may name the default port');
  }

  say(`vagent ${vagentVersion()} listening on ${url} (state dir ${settings.state_dir}, auth_mode ${settings.auth_mode})`);
  say(telephonyNotice(settings.livekit));
  say(llmNotice(settings.llm));
  // The daemon's default model unpriced: its calls would count as free (as apply warns for an agent's).
  const pricingFile = settings.pricing_file ?? shippedPaths.pricing;
  if (settings.llm.base_url && settings.llm.model && loadPricing(pricingFile).list.llm[settings.llm.model] === undefined) {
    const notice = llmPriceNotice(settings.llm.model, pricingFile);
    logger.warn({ model: settings.llm.model, pricing_file: pricingFile }, notice);
    say(notice);
  }
  say(retentionNotice(settings.retention_days));
  say(runtime.services.recordings.notice());
  const allowNotice = webhookAllowNotice(settings);
  if (allowNotice) say(allowNotice);
  // Recordings cut short by a stop without a goodbye (kill -9) get their real sizes.
  const repaired = runtime.services.recordings.repairHeaders();
  if (repaired > 0) logger.info({ repaired }, 'recordings cut short by a stop had their WAV headers repaired');
  if (media) say(media.notice());
  if (settings.auth_mode === 'audit') say(auditModeNotice());
  if (spaceNotice) say(spaceNotice);
  if (runtime.fresh) {
    const dirFlag = settings.state_dir === defaultStateDir() ? '' : ` --state-dir ${settings.state_dir}`;
    say('A new state dir: tenant "default" was created. In another shell, create its first API key and log in:');
    say(`  vagent admin key create --tenant default${dirFlag} | vagent login --url ${loginUrl(settings, recorded)} --api-key-stdin`);
  }

  let stopping: Promise<void> | undefined;
  return {
    url,
    stop() {
      stopping ??= (async () => {
        // Calls on carrier streams are hung up and their sessions ended before the API drains.
        await media?.streams.closeAll();
        await media?.rooms?.closeAll();
        await app.close();
        await media?.stop();
        await tasks.stop();
        // A purge under way stops between two batches, before the store closes.
        await retention.stop();
        await runtime.services.inbound.settled();
        await runtime.services.webhookDelivery.stop();
        // Pre-synthesis reads agent revisions from the store, so it stops before the store
        // closes; closing the engine ends the syntheses under way at once (not at their limit).
        const presynthesisStopped = runtime.services.agents.stopPresynthesis();
        await speech?.close();
        await presynthesisStopped;
        await speech?.cache.stopMaintenance();
        await runtime.services.repos.store.stopBackgroundCheckpoints();
        runtime.close();
        lock.release();
        logger.info('vagent stopped');
        logger.flush();
      })();
      return stopping;
    },
  };
}

/**
 * Runs the daemon until SIGTERM or SIGINT, then shuts down gracefully; a second signal
 * exits at once.
 */
export async function serveUntilSignal(settings: Settings): Promise<void> {
  // The handlers go in before the daemon starts: a signal arriving after the "listening" line
  // but before they were installed used to kill the process outright (default action),
  // skipping the drain and leaving daemon.lock behind.
  let signals = 0;
  let received: NodeJS.Signals | undefined;
  let onStop: (() => void) | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    signals += 1;
    if (signals > 1) process.exit(130);
    received = signal;
    onStop?.();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  // A reader of the daemon's output that goes away (`vagent serve | head`, a log shipper
  // restarting) must not stop it: what it would have printed is dropped. Its stdout is the log's
  // (fd 1, written by pino, which handles EPIPE itself); its hints go to stderr.
  process.stderr.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
  });
  const daemon = await startDaemon(settings);
  await new Promise<void>((resolve) => {
    onStop = () => {
      process.stderr.write(`${received}: finishing in-flight requests, then stopping\n`);
      daemon.stop().then(resolve, (err: unknown) => {
        process.stderr.write(`shutdown failed: ${String(err)}\n`);
        process.exitCode = 1;
        resolve();
      });
    };
    if (received) onStop();
  });
}
