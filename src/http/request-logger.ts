/**
 * Per-request loggers made on first use. Fastify gives every request a child of the daemon's
 * pino logger with the request id bound (`reqId`); building one (bindings serialised, the
 * redaction and level set up) costs about as much as a small route's handler, and at the
 * daemon's usual level most requests never write a line. {@link lazyChildLoggerFactory} hands
 * fastify a stand-in that builds the same child the first time a line is written at an enabled
 * level, so what reaches the log is unchanged.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'pino';

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/** A parent logger that can say whether a level is enabled (pino can; fastify's no-op logger cannot). */
type LevelAware = FastifyBaseLogger & { isLevelEnabled(level: string): boolean };

const canTellLevels = (logger: FastifyBaseLogger): logger is LevelAware =>
  typeof (logger as Partial<LevelAware>).isLevelEnabled === 'function';

/** Stands in for `parent.child(bindings, options)` until a line is written. */
class LazyChildLogger implements FastifyBaseLogger {
  #child: FastifyBaseLogger | null = null;

  constructor(
    private readonly parent: LevelAware,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  get level(): string {
    return this.#child?.level ?? this.parent.level;
  }

  set level(level: string) {
    this.real().level = level;
  }

  fatal(...args: unknown[]): void {
    this.write('fatal', args);
  }
  error(...args: unknown[]): void {
    this.write('error', args);
  }
  warn(...args: unknown[]): void {
    this.write('warn', args);
  }
  info(...args: unknown[]): void {
    this.write('info', args);
  }
  debug(...args: unknown[]): void {
    this.write('debug', args);
  }
  trace(...args: unknown[]): void {
    this.write('trace', args);
  }
  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.real().child(bindings, options);
  }

  private real(): FastifyBaseLogger {
    this.#child ??= this.parent.child(this.bindings, this.options);
    return this.#child;
  }

  private write(level: Level, args: unknown[]): void {
    if (this.#child === null && !this.parent.isLevelEnabled(level)) return;
    (this.real()[level] as (...a: unknown[]) => void)(...args);
  }
}

/**
 * A fastify `childLoggerFactory`: the request's child logger, built on its first enabled line.
 * A route with logger options of its own (`logLevel`, serializers), or a parent that cannot tell
 * its levels, gets its child at once, as fastify's default factory gives it.
 *
 * @returns a logger with fastify's logger methods (`FastifyBaseLogger`)
 */
export function lazyChildLoggerFactory(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  if (!canTellLevels(logger) || Object.keys(options).length > 0) return logger.child(bindings, options);
  return new LazyChildLogger(logger, bindings, options);
}
