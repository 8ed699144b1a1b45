/**
 * The stores of the growth bench (bench/growth.mjs): template sessions driven through a real
 * daemon's API, and a generator that grows a state dir to hundreds of thousands of sessions by
 * replaying those templates through vagent's own store (`dist/store`).
 *
 * Templates ({@link driveTemplates}): prepared outbound calls of `ag_emi_reminder` (a session
 * and a call record, the opening spoken with the customer's name) and `ag_clinic_booking`
 * sessions, each with 4 turns carrying speech-recognition costs (`stt_provider: deepgram`,
 * priced in config/pricing.yaml), then ended — a few are left open. Every request carries an
 * Idempotency-Key, so the daemon stores the replies as it does for any keyed client. Each
 * template gets distinct customer values, so its dynamic clips (name readbacks, the amount
 * due) are synthesised by the daemon's real speech engine into `<state-dir>/audio`.
 *
 * Generator ({@link generateSessions}): for each new session, a template's rows with a fresh
 * session number (`newSessionNumber`, as the daemon draws them), another customer and shifted
 * times, written with the store's repositories in the order the daemon writes them — session
 * row at open, 4 turn rows, the call row, the end — so the spend ledger's triggers (migration
 * 7) keep the ledger exactly as they do in the daemon. Creation times spread evenly over the
 * last `days` days, today's share between local midnight and now; idempotency rows only for the
 * requests of the last `retentionH` hours (the daemon purges older ones). The generator makes
 * no audio: a copied row reuses its template's clips, so the cache holds what the templates
 * and the agents' static lines made.
 */
import crypto from 'node:crypto';
import { readDatabase } from './db.mjs';

const NAMES = [
  'Ravi Kumar',
  'Priya Sharma',
  'Anil Mehta',
  'Sunita Rao',
  'Vikram Singh',
  'Meera Iyer',
  'Arjun Nair',
  'Kavita Joshi',
  'Rahul Gupta',
  'Deepa Menon',
  'Suresh Patil',
  'Anjali Desai',
  'Manoj Verma',
  'Lakshmi Pillai',
  'Imran Khan',
  'Neha Kapoor',
  'Gopal Reddy',
  'Farida Shaikh',
  'Rohit Bansal',
  'Asha Kulkarni',
];
const EMI_TURNS = ['yes', 'yes', 'this Friday', 'yes'];
const BOOKING_TURNS = ['My name is Priya Sharma', 'yes', 'tomorrow', 'yes'];
/** What a speech recogniser reports with each turn (costs: deepgram per minute of audio). */
const STT = { stt_provider: 'deepgram', stt_ms: 1800, silence_ms: 400, stt_confidence: 0.92 };

async function api(url, key, method, pathname, body, idempotencyKey) {
  const headers = { authorization: `Bearer ${key}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (idempotencyKey) headers['idempotency-key'] = idempotencyKey;
  const res = await fetch(url + pathname, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${pathname}: ${res.status} ${text}`);
  return JSON.parse(text);
}

/**
 * Drives `calls` prepared calls and `bookings` booking sessions through the daemon at `url`
 * (tenant of `key`), 4 turns each; all but the last `open` of them are ended.
 * @param {string} database the daemon's SQLite file (each session's row is read right after it
 *        opened, read-only: the state and metrics it was stored with at open)
 * @param {number} seed makes the customers of this run differ from another store's
 * @returns {Promise<Array<{id: number, kind: 'call'|'booking', open: {engine: string, metrics: string}}>>}
 */
export async function driveTemplates(url, key, database, { calls, bookings, open, seed = 0 }) {
  const prefix = `tpl-${crypto.randomBytes(4).toString('hex')}`;
  const out = [];
  // Calls and bookings interleaved evenly; the last `open` stay open.
  const kinds = [
    ...Array.from({ length: calls }, (_, c) => ({ kind: 'call', at: (c + 0.5) / calls })),
    ...Array.from({ length: bookings }, (_, b) => ({ kind: 'booking', at: (b + 0.5) / bookings })),
  ].sort((a, b) => a.at - b.at);
  const total = kinds.length;
  for (let i = 0; i < total; i++) {
    const { kind } = kinds[i];
    const name = NAMES[(i + seed) % NAMES.length];
    const n = 1000 + i + seed * 97;
    let sessionId;
    if (kind === 'call') {
      const placed = await api(
        url,
        key,
        'POST',
        '/v1/calls',
        {
          agent_id: 'ag_emi_reminder',
          to: `+9198${String(76543210 + n).padStart(8, '0')}`,
          customer_name: name,
          context: {
            emi_amount: `${(4 + (n % 20)) * 1000 + 250}`,
            due_date: `the ${5 + (n % 20)}th of December`,
            loan_last4: String(1000 + ((n * 37) % 9000)),
          },
        },
        `${prefix}-${i}-open`,
      );
      sessionId = placed.session_id;
    } else {
      const opened = await api(
        url,
        key,
        'POST',
        '/v1/sessions',
        { agent_id: 'ag_clinic_booking', customer_name: name },
        `${prefix}-${i}-open`,
      );
      sessionId = opened.session_id;
    }
    const id = Number(sessionId.slice(3));
    const row = readDatabase(database, (db) => db.prepare('SELECT engine, metrics FROM sessions WHERE id = ?').get(id));
    if (!row) throw new Error(`session ${sessionId} is not in ${database}`);
    const turns = kind === 'call' ? EMI_TURNS : BOOKING_TURNS;
    for (let t = 0; t < turns.length; t++) {
      await api(url, key, 'POST', `/v1/sessions/${sessionId}/turn`, { text: turns[t], ...STT }, `${prefix}-${i}-turn-${t}`);
    }
    if (i < total - open) await api(url, key, 'POST', `/v1/sessions/${sessionId}/end`, {}, `${prefix}-${i}-end`);
    out.push({ id, kind, open: row });
  }
  return out;
}

/**
 * Opens `n` prepared calls of `ag_emi_reminder` with `body`'s customer (its clips cached after the
 * first) and gives each the 4 turns of a template call, leaving them open: a store's open calls,
 * made as the daemon makes them. Resolves with their session ids.
 */
export async function openCalls(url, key, body, n) {
  const prefix = `open-${crypto.randomBytes(4).toString('hex')}`;
  const ids = [];
  for (let i = 0; i < n; i++) {
    const placed = await api(url, key, 'POST', '/v1/calls', JSON.parse(body), `${prefix}-${i}-open`);
    for (let t = 0; t < EMI_TURNS.length; t++) {
      await api(url, key, 'POST', `/v1/sessions/${placed.session_id}/turn`, { text: EMI_TURNS[t], ...STT }, `${prefix}-${i}-turn-${t}`);
    }
    ids.push(placed.session_id);
  }
  return ids;
}

/** Ends sessions `ids` (`se_…`) through the daemon's API. */
export async function endSessions(url, key, ids) {
  const prefix = `end-${crypto.randomBytes(4).toString('hex')}`;
  for (const [i, id] of ids.entries()) await api(url, key, 'POST', `/v1/sessions/${id}/end`, {}, `${prefix}-${i}`);
}

/** Local midnight (epoch s) of the day holding `nowS` in a zone `offsetS` ahead of UTC. */
function localMidnight(nowS, offsetS) {
  return Math.floor((nowS + offsetS) / 86_400) * 86_400 - offsetS;
}

/**
 * Sorted creation times (epoch s) of `n` sessions spread evenly over `days` days ending now:
 * each earlier day gets n/days over its 24 hours, today gets its share between local midnight
 * and `nowS`.
 */
export function creationTimes(n, days, nowS, offsetS) {
  const midnight = localMidnight(nowS, offsetS);
  const times = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const day = i % days; // 0 = today
    const start = midnight - day * 86_400;
    const span = day === 0 ? Math.max(1, nowS - midnight - 60) : 86_400;
    times[i] = start + Math.random() * span;
  }
  return times.sort();
}

/**
 * Grows the state dir's database by `n` sessions copied from the templates (see the module
 * comment), in transactions of `batch` sessions.
 * @param {object} o
 * @param {string} o.database   the state dir's vagent.db (no daemon running on it)
 * @param {Array<{id: number, open: {engine: string, metrics: string}}>} o.templates what
 *        {@link driveTemplates} returned (ended ones are copied; those left open are not)
 * @param {number} o.n          sessions to add
 * @param {number} o.days       spread over this many days ending now
 * @param {number} o.openEvery  one session in this many is left open (never ended)
 * @param {number} o.retentionH idempotency rows are written for requests newer than this
 * @param {(done: number) => void} [o.progress]
 * @returns {Promise<{sessions: number, turns: number, calls: number, idempotency_rows: number, open: number, today: number,
 *          templates: number, seconds: number, spend_micro: number}>} `spend_micro`: the tenant's
 *          spend over all days, read from the ledger and checked against a walk of its sessions
 * @throws Error when the ledger and the walk differ (the copies are not what the daemon writes)
 */
export async function generateSessions({
  database,
  templates,
  n,
  days,
  openEvery,
  retentionH,
  tenant = 'default',
  batch = 2000,
  progress,
}) {
  const { openRepos } = await import('../../dist/store/index.js');
  const { newSessionNumber } = await import('../../dist/domain/ids.js');
  const started = process.hrtime.bigint();
  const repos = openRepos(database);
  const { db } = repos.store;
  try {
    const tpl = templates
      .map((t) => {
        const s = repos.sessions.get(t.id);
        if (!s) throw new Error(`template session se_${t.id} is not in ${database}`);
        const turns = db
          .prepare('SELECT idx, data, engine, metrics, cost_micro FROM session_turns WHERE session_seq = ? ORDER BY idx')
          .all(s.seq)
          .map((r) => ({ ...r, data: JSON.parse(r.data) }));
        const call = db.prepare('SELECT * FROM calls WHERE id = ?').get(t.id) ?? null;
        // Through the repo, which inflates a body stored deflated (body_z, over 512 bytes).
        const idem = db
          .prepare("SELECT tenant_id, key FROM idempotency WHERE state = 'done'")
          .all()
          .map((k) => repos.idempotency.get(k.tenant_id, k.key))
          .filter((r) => r.body?.includes(`se_${t.id}"`));
        if (s.status !== 'ended') return null;
        return { s, turns, call, idem, open: t.open };
      })
      .filter(Boolean);
    if (tpl.length === 0) throw new Error('no ended template session to copy');

    const nowS = Date.now() / 1000;
    const times = creationTimes(n, days, nowS, 19_800); // Asia/Kolkata, the default timezone
    const idemFrom = nowS - retentionH * 3600;
    const midnight = localMidnight(nowS, 19_800);
    const counts = { sessions: 0, turns: 0, calls: 0, idempotency_rows: 0, open: 0, today: 0 };
    for (let from = 0; from < n; from += batch) {
      repos.store.writeNow(() => {
        for (let i = from; i < Math.min(n, from + batch); i++) {
          const t = tpl[i % tpl.length];
          const created = times[i];
          const shift = created - t.s.created_at;
          let id = newSessionNumber();
          while (repos.sessions.exists(id)) id = newSessionNumber();
          const name = NAMES[(i * 7) % NAMES.length];
          const phone = `+9198${String(10_000_000 + ((i * 7919) % 89_999_999)).padStart(8, '0')}`;
          const seq = repos.sessions.insert({
            id,
            tenant_id: tenant,
            agent_id: t.s.agent_id,
            agent_digest: t.s.agent_digest,
            customer_name: name,
            customer_phone: t.call ? phone : t.s.customer_phone,
            title: t.s.title,
            context: t.s.context,
            ref_ms: t.s.ref_ms + shift * 1000,
            engine: t.open.engine,
            metrics: t.open.metrics,
            status: 'open',
            created_at: created,
            ended_at: null,
            summary: null,
          });
          if (t.call) {
            const { seq: _seq, ...call } = t.call;
            repos.calls.insert({ ...call, id, to_number: phone, reserve_until: call.reserve_until + shift });
            counts.calls += 1;
          }
          for (const turn of t.turns) {
            repos.sessions.addTurn(
              seq,
              turn.idx,
              JSON.stringify({ ...turn.data, at: turn.data.at + shift }),
              turn.engine,
              turn.metrics,
              turn.cost_micro,
            );
            counts.turns += 1;
          }
          const keepOpen = i % openEvery === openEvery - 1;
          if (keepOpen) counts.open += 1;
          else repos.sessions.end(seq, t.s.engine, t.s.metrics, t.s.ended_at + shift, t.s.summary);
          if (created >= midnight) counts.today += 1;
          if (created >= idemFrom) {
            for (const r of t.idem) {
              if (keepOpen && r.body.includes('"ended":true')) continue;
              const body = r.body.replaceAll(`se_${t.s.id}`, `se_${id}`).replaceAll(`cl_${t.s.id}`, `cl_${id}`);
              repos.idempotency.put(tenant, `gen-${crypto.randomUUID()}`, r.fingerprint, r.status, body, r.created_at + shift);
              counts.idempotency_rows += 1;
            }
          }
          counts.sessions += 1;
        }
      });
      progress?.(Math.min(n, from + batch));
    }
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    // Self-check: the ledger the triggers kept equals the walk of every session (the repo walks
    // when the bounds are not on quarter-hours), so the rows are as the daemon would have left them.
    const end = Math.ceil(nowS / 86_400 + 2) * 86_400;
    const ledger = repos.calls.spendMicro(tenant, 0, end, nowS);
    const walk = repos.calls.spendMicro(tenant, 0.5, end + 0.5, nowS);
    if (ledger !== walk) throw new Error(`the generated store's spend ledger (${ledger} µ₹) differs from its sessions' costs (${walk} µ₹)`);
    return { ...counts, templates: tpl.length, seconds, spend_micro: ledger };
  } finally {
    repos.store.close();
  }
}
