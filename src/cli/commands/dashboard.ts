/**
 * `vagent dashboard`: the live calls of the tenant on a full-screen terminal UI (Ink). This file
 * checks the terminal and wires the client; Ink and React load only here, by a dynamic import
 * of ../dashboard/app.js, so that no other command pays for them.
 */
import type { HealthStatus, RecognizerCheck, VagentClient } from '../../client/index.js';
import type { CommandContext } from '../context.js';
import { CliError, EXIT } from '../errors.js';
import type { DashboardSource } from '../dashboard/app.js';
import { MAX_HISTORY_PAGES } from '../dashboard/model.js';

/** True when colours may be used: NO_COLOR (https://no-color.org) is unset or empty, and FORCE_COLOR is not 0. */
export function colorAllowed(env: NodeJS.ProcessEnv = process.env): boolean {
  return !env.NO_COLOR && env.FORCE_COLOR !== '0';
}

/**
 * The recogniser's status for the dashboard's header: from `GET /v1/health` `recognition`
 * (`off` when speech recognition is off, `none` for a daemon without call audio), with each
 * configured cloud recogniser's check (`GET /v1/telephony/check` `recognizers`): `deepgram ok`,
 * `sarvam unauthenticated`.
 */
export function recognizerStatus(health: HealthStatus, cloud: readonly RecognizerCheck[]): string {
  const r = health.recognition;
  if (r === undefined) return 'none';
  if (r.status === 'off') return 'off';
  const checked = cloud.map((c) => `${c.provider} ${c.ok ? 'ok' : (c.problem ?? 'failing')}`);
  if (checked.length > 0) return checked.join(', ');
  return r.provider ?? 'on';
}

/** The dashboard's view of the daemon, through the client. */
export function clientSource(client: VagentClient): DashboardSource {
  return {
    url: client.url,
    async listCalls() {
      // The calls in progress (however old), then the newest 100 (for the count of today's calls).
      const [live, newest] = await Promise.all([client.listCalls({ status: 'in_progress', limit: 100 }), client.listCalls({ limit: 100 })]);
      return [...live.data, ...newest.data];
    },
    async status() {
      // Each part on its own: what one request cannot say is shown as unknown ('-').
      const [health, check, first] = await Promise.allSettled([
        client.health(),
        client.telephonyCheck(),
        // The tenant's oldest event kept: events name their tenant, and no route names the key's.
        client.listEvents({ limit: 1 }),
      ]);
      const cloud = check.status === 'fulfilled' ? (check.value.recognizers ?? []) : [];
      return {
        budget: check.status === 'fulfilled' ? check.value.budget : null,
        tenant: first.status === 'fulfilled' ? (first.value.data[0]?.tenant_id ?? null) : null,
        daemon: {
          telephony: check.status === 'fulfilled' ? (check.value.ok ? 'ok' : (check.value.problem ?? 'failing')) : null,
          recognizer: health.status === 'fulfilled' ? recognizerStatus(health.value, cloud) : null,
        },
      };
    },
    events: ({ signal, onState }) => client.streamEvents({ signal, onState, failFast: false }),
    async callHistory(callId) {
      const events = [];
      let after: string | undefined;
      for (let page = 0; page < MAX_HISTORY_PAGES; page++) {
        const p = await client.listEvents({ call_id: callId, limit: 100, ...(after === undefined ? {} : { after }) });
        events.push(...p.data);
        if (!p.has_more || p.next_cursor === null) return { events, complete: true };
        after = p.next_cursor;
      }
      return { events, complete: false };
    },
    async hangUp(callId) {
      const res = await client.hangUpCall(callId);
      return res.line === 'hung_up'
        ? `hung up ${callId}`
        : res.line === 'already_gone'
          ? `${callId} ended: its line was already gone`
          : `${callId} ended (never dialled)`;
    },
  };
}

/**
 * `vagent dashboard`: runs until `q` or Ctrl-C, then ends the process (exit 0).
 * @throws CliError (exit 2) when stdin or stdout is not a terminal, pointing to
 *   `vagent events tail --json`; the client's errors (exit 1 or 3) when the daemon refuses or
 *   is not there.
 */
export async function dashboard(ctx: CommandContext): Promise<void> {
  if (!process.stdout.isTTY || !process.stdin.isTTY)
    throw new CliError(
      'vagent dashboard needs a terminal; in a script or a pipe, follow the events with `vagent events tail --json`',
      EXIT.usage,
    );
  const client = await ctx.client();
  await client.health();
  // React's production build: its development build checks every render, several times the
  // CPU on a busy daemon. Set before React first loads (it reads NODE_ENV then).
  process.env.NODE_ENV ??= 'production';
  // Ink draws only a last frame, at exit, when the environment says CI (its is-in-ci check,
  // read when Ink loads): the terminal checked above is a person's, whatever CI says.
  delete process.env.CI;
  delete process.env.CONTINUOUS_INTEGRATION;
  const { runDashboard } = await import('../dashboard/app.js');
  await runDashboard(clientSource(client), colorAllowed());
  // The dashboard has exited and the terminal is given back: end the process now rather than
  // when its last socket closes. After `q`, a `GET /v1/events` request was seen, now and then,
  // still in flight in Node's fetch although its stream had been aborted, which kept the process
  // (and the shell's prompt) waiting until the daemon closed the connection. (Node's fetch can
  // lose an abort once its Request has been garbage-collected: https://github.com/nodejs/undici/issues/3644.)
  setImmediate(() => process.exit(EXIT.ok)).unref();
}
