/**
 * Test harness: a real state dir in a temp folder, the real services and app, `inject()`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { SettingsSchema, type Settings } from '../../src/config/schema.js';
import { buildApp, type AppOptions } from '../../src/http/app.js';
import { openRuntime, type Runtime, type RuntimeOptions } from '../../src/daemon/runtime.js';

/** A temp dir removed by {@link TestApp.close}. */
export function tempDir(prefix = 'vagent-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** The smallest valid agent definition with id `id` (docs/agents.md): one opening line, one step, a closing line. */
export function minimalAgent(id: string, direction: 'inbound' | 'outbound' = 'inbound'): Record<string, unknown> {
  return {
    id,
    name: `Test agent ${id}`,
    direction,
    language: 'en-IN',
    opening: [{ text: 'Hello from the test agent.' }],
    steps: [{ id: 'ok', ask: 'Is now a good time?', capture: { slot: 'good_time', type: 'yes_no' } }],
    closing: 'Bye!',
  };
}

/** An app over a fresh state dir with a key for tenant `default`. */
export interface TestApp {
  app: FastifyInstance;
  runtime: Runtime;
  settings: Settings;
  /** API key of tenant `default`. */
  key: string;
  /** Creates tenant `name` with a key, returning the key. */
  tenantKey(name: string): string;
  /** Sends a request with the default key (or `opts.key`; `null` for none). */
  call(
    method: string,
    url: string,
    body?: unknown,
    opts?: { key?: string | null; headers?: Record<string, string> },
  ): Promise<LightMyRequestResponse>;
  /**
   * Applies a minimal valid agent `id` (PUT /v1/agents/{id}) with the default key (or
   * `opts.key`, i.e. in that key's tenant); throws unless the daemon accepts it.
   */
  agent(id: string, opts?: { key?: string; direction?: 'inbound' | 'outbound' }): Promise<void>;
  close(): Promise<void>;
}

/** Builds a {@link TestApp}; `overrides` are settings (auth_mode, …); `runtimeOptions` may bring speech and a clock. */
export async function makeTestApp(
  overrides: Partial<Settings> = {},
  runtimeOptions: RuntimeOptions = {},
  appOptions: Pick<AppOptions, 'events'> = {},
): Promise<TestApp> {
  const dir = tempDir();
  const settings = SettingsSchema.parse({ state_dir: dir, log_level: 'silent', ...overrides });
  const runtime = openRuntime(settings, runtimeOptions);
  const app = await buildApp({
    services: runtime.services,
    bodyLimitBytes: settings.body_limit_bytes,
    logger: false,
    version: 'test',
    ...appOptions,
  });
  await app.ready();
  const key = runtime.services.tenants.createKey('default').key;
  const call: TestApp['call'] = (method, url, body, opts = {}) => {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    const k = opts.key === undefined ? key : opts.key;
    if (k !== null) headers.authorization = `Bearer ${k}`;
    return app.inject({ method: method as 'GET', url, headers, ...(body === undefined ? {} : { payload: body as object }) });
  };
  return {
    app,
    runtime,
    settings,
    key,
    tenantKey(name: string) {
      if (!runtime.services.tenants.listTenants().some((t) => t.name === name)) runtime.services.tenants.createTenant(name);
      return runtime.services.tenants.createKey(name).key;
    },
    call,
    async agent(id, opts = {}) {
      const res = await call('PUT', `/v1/agents/${id}`, minimalAgent(id, opts.direction), { key: opts.key ?? key });
      if (res.statusCode !== 200 && res.statusCode !== 201) {
        throw new Error(`PUT /v1/agents/${id} answered ${res.statusCode}: ${res.body}`);
      }
    },
    async close() {
      await app.close();
      runtime.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
