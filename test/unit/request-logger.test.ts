/**
 * Per-request loggers made on first use (src/http/request-logger.ts): the same lines as
 * fastify's eager child, and no child at all for a request that writes nothing.
 */
import { Writable } from 'node:stream';
import Fastify from 'fastify';
import pino from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { lazyChildLoggerFactory } from '../../src/http/request-logger.js';

function capture(level: string) {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString('utf8').split('\n')) if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level, base: null, timestamp: false }, stream), lines };
}

describe('lazyChildLoggerFactory', () => {
  it('builds no child while nothing is written at an enabled level', () => {
    const { logger, lines } = capture('warn');
    const child = vi.spyOn(logger, 'child');
    const log = lazyChildLoggerFactory(logger, { reqId: 'req_1' }, {});
    log.info({ a: 1 }, 'hidden');
    log.debug('hidden');
    log.trace('hidden');
    expect(child).not.toHaveBeenCalled();
    expect(lines).toEqual([]);
    expect(log.level).toBe('warn');
  });

  it('writes the lines the eager child would, with the bindings, building the child once', () => {
    const { logger, lines } = capture('info');
    const child = vi.spyOn(logger, 'child');
    const log = lazyChildLoggerFactory(logger, { reqId: 'req_2' }, {});
    log.info({ route: '/v1/x' }, 'first');
    log.error(new Error('boom'), 'second');
    log.warn('third %s', 'formatted');
    expect(child).toHaveBeenCalledTimes(1);
    expect(lines.map((l) => [l.reqId, l.msg, l.level])).toEqual([
      ['req_2', 'first', 30],
      ['req_2', 'second', 50],
      ['req_2', 'third formatted', 40],
    ]);
    expect(lines[0]!.route).toBe('/v1/x');
    log.child({ part: 'x' }).info('grandchild');
    expect(lines[3]).toMatchObject({ reqId: 'req_2', part: 'x', msg: 'grandchild' });
  });

  it('takes a level of its own, and builds at once when fastify passes options', () => {
    const { logger, lines } = capture('warn');
    const log = lazyChildLoggerFactory(logger, { reqId: 'req_3' }, {});
    log.level = 'debug';
    log.debug('now shown');
    expect(lines.map((l) => l.msg)).toEqual(['now shown']);
    expect(logger.level).toBe('warn');
    const child = vi.spyOn(logger, 'child');
    lazyChildLoggerFactory(logger, { reqId: 'req_4' }, { level: 'info' });
    expect(child).toHaveBeenCalledWith({ reqId: 'req_4' }, { level: 'info' });
  });

  it('serves fastify: request lines carry the request id', async () => {
    const { logger, lines } = capture('info');
    const app = Fastify({ loggerInstance: logger, childLoggerFactory: lazyChildLoggerFactory, genReqId: () => 'req_5' });
    app.get('/x', async (request) => {
      request.log.info('in handler');
      return { ok: true };
    });
    const res = await app.inject({ method: 'GET', url: '/x' });
    expect(res.statusCode).toBe(200);
    expect(lines.map((l) => [l.reqId, l.msg])).toEqual([
      ['req_5', 'incoming request'],
      ['req_5', 'in handler'],
      ['req_5', 'request completed'],
    ]);
    await app.close();
  });
});
