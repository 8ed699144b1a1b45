/**
 * The `claim-first` idempotency mode, kept for handlers with effects outside the database
 * (placing a call): the claim is durable before the handler runs, a twin request meanwhile
 * gets idempotency_key_in_progress, and a 5xx releases the key.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { installErrorHandling } from '../../src/http/plugins/errors.js';
import { installIdempotency, scopeOf, sendOutcome } from '../../src/http/plugins/idempotency.js';
import '../../src/http/types.js';
import { IdempotencyService } from '../../src/app/idempotency.js';
import { UnitOfWork } from '../../src/app/unit-of-work.js';
import { openRepos, type Repos } from '../../src/store/index.js';

let dir: string;
let repos: Repos;
let service: IdempotencyService;
let uow: UnitOfWork;
let app: FastifyInstance;
/** Handler calls waiting to finish: `finish(true)` makes one fail with a 5xx. */
let waiting: Array<(fail: boolean) => void>;
let runs: number;
let onCall: (() => void) | undefined;
/** Resolves when a handler call is waiting. */
const nextCall = () =>
  new Promise<void>((r) => {
    if (waiting.length > 0) r();
    else onCall = r;
  });
const finish = (fail = false) => waiting.shift()!(fail);

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vagent-claim-'));
  repos = openRepos(path.join(dir, 'vagent.db'));
  repos.store.writeNow(() => repos.tenants.insertTenant('default', 0));
  service = new IdempotencyService(repos, crypto.randomBytes(32), 3600);
  uow = new UnitOfWork(repos.store, service);
  app = Fastify();
  app.decorate('checkResponses', false);
  app.decorateRequest('caller', null);
  app.decorateRequest('idem', null);
  installErrorHandling(app);
  app.addHook('onRequest', async (request) => {
    request.principal = { tenantId: 'default', keyId: 'key_test', requestId: request.id, method: request.method, route: '/dial' };
  });
  waiting = [];
  runs = 0;
  await app.register(async (scope) => {
    installIdempotency(scope, service, uow);
    scope.post('/dial', async (request, reply) => {
      runs += 1;
      const fail = await new Promise<boolean>((resolve) => {
        waiting.push(resolve);
        onCall?.();
        onCall = undefined;
      });
      if (fail) throw new Error('provider exploded');
      return sendOutcome(reply, await uow.run(scopeOf(request, 201), () => ({ dialled: (request.body as { to: string }).to })));
    });
  });
  await app.ready();
});

afterEach(async () => {
  await app.close();
  repos.store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const dial = (key: string, to = '+919876543210') =>
  app.inject({ method: 'POST', url: '/dial', headers: { 'idempotency-key': key }, payload: { to } });

describe('claim-first idempotency', () => {
  it('commits the claim before the handler runs; a twin meanwhile gets 409; then replays', async () => {
    const first = dial('k1');
    await nextCall();
    // the claim is durable and visible to another connection while the handler is still running
    const other = new Database(path.join(dir, 'vagent.db'), { readonly: true });
    expect(other.prepare('SELECT state FROM idempotency WHERE key = ?').get('k1')).toEqual({ state: 'in_progress' });
    other.close();

    const twin = await dial('k1');
    expect(twin.statusCode).toBe(409);
    expect(twin.json().error.code).toBe('idempotency_key_in_progress');

    finish();
    const res = await first;
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({ dialled: '+919876543210' });

    const replay = await dial('k1');
    expect(replay.statusCode).toBe(201);
    expect(replay.headers['idempotency-replayed']).toBe('true');
    expect(replay.body).toBe(res.body);
    expect(runs).toBe(1);

    const reuse = await dial('k1', '+919999999999');
    expect(reuse.statusCode).toBe(422);
    expect(reuse.json().error.code).toBe('idempotency_key_reuse');
  });

  it('releases the key after a 5xx so a retry runs the handler again', async () => {
    const first = dial('k2');
    await nextCall();
    finish(true);
    const failed = await first;
    expect(failed.statusCode).toBe(500);
    expect(repos.idempotency.get('default', 'k2')).toBeUndefined();

    const retry = dial('k2');
    await nextCall();
    finish();
    expect((await retry).statusCode).toBe(201);
    expect(runs).toBe(2);
  });
});
