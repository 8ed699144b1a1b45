/**
 * What the adapters of the recogniser port (./recognizer.ts) share at run time, written once:
 * {@link StreamEvents} (a stream's listeners), {@link BaseRecognitionStream} (the port's rules for
 * `push`/`finish` and a stream's state) and {@link withTimeout} (a deadline on a stream's answer).
 */
import {
  RecognizerError,
  type RecognitionEvents,
  type RecognitionOptions,
  type RecognitionState,
  type RecognitionStream,
  type RecognizerClock,
} from './recognizer.js';

/**
 * Applies a deadline to a stream's answer, turning a hung recogniser into a typed error.
 * Arms when `finish()` is called: if neither the final nor an error arrives within `ms`, the
 * inner stream is cancelled and the wrapper emits a `timeout` {@link RecognizerError}.
 * Everything else is forwarded unchanged.
 * @param stream the stream to guard (listen through the returned wrapper, not the inner stream)
 * @param ms     deadline after `finish()`, ms, > 0
 * @param clock  the media worker's clock (`systemClock`, or a `FakeClock` in tests)
 * @param provider name for the error; default `'recognizer'`
 * @throws RangeError if `ms` is not a positive finite number
 */
export function withTimeout(stream: RecognitionStream, ms: number, clock: RecognizerClock, provider = 'recognizer'): RecognitionStream {
  if (!(Number.isFinite(ms) && ms > 0)) throw new RangeError(`timeout must be a positive number of ms; got ${ms}`);
  const out = new StreamEvents();
  let disarm: (() => void) | undefined;
  let ended = false;
  let timedOut = false;
  const stop = (): void => {
    disarm?.();
    disarm = undefined;
  };
  stream.on('partial', (p) => {
    if (!ended) out.emit('partial', p);
  });
  stream.on('final', (f) => {
    if (ended) return;
    if (stream.state !== 'open') {
      ended = true;
      stop();
    }
    out.emit('final', f);
  });
  stream.on('error', (e) => {
    if (ended) return;
    ended = true;
    stop();
    out.emit('error', e);
  });
  return {
    options: stream.options,
    get state(): RecognitionState {
      return timedOut ? 'failed' : stream.state;
    },
    push: (pcm) => stream.push(pcm),
    finish(): void {
      stream.finish();
      if (disarm || ended) return;
      disarm = clock.setTimer(() => {
        disarm = undefined;
        if (ended) return;
        ended = true;
        timedOut = true;
        stream.cancel();
        out.emit('error', new RecognizerError('timeout', provider, `no transcript within ${ms} ms of the end of speech`));
      }, ms);
    },
    cancel(): void {
      ended = true;
      stop();
      stream.cancel();
    },
    on: (event, listener) => out.on(event, listener),
  };
}

/** A small typed listener list for {@link RecognitionEvents}; a throwing listener does not stop the others. */
export class StreamEvents {
  private readonly listeners: { [K in keyof RecognitionEvents]: Array<(...args: RecognitionEvents[K]) => void> } = {
    partial: [],
    final: [],
    error: [],
  };

  /** Adds a listener; returns its remover. */
  on<K extends keyof RecognitionEvents>(event: K, listener: (...args: RecognitionEvents[K]) => void): () => void {
    if (typeof listener !== 'function') throw new TypeError('listener must be a function');
    const list = this.listeners[event] as Array<(...args: RecognitionEvents[K]) => void>;
    list.push(listener);
    return () => {
      const i = list.indexOf(listener);
      if (i >= 0) list.splice(i, 1);
    };
  }

  /**
   * Calls the listeners of `event` in order. A listener's exception is rethrown asynchronously
   * (`queueMicrotask`) so it surfaces as an uncaught error of the worker without skipping the rest.
   */
  emit<K extends keyof RecognitionEvents>(event: K, ...args: RecognitionEvents[K]): void {
    for (const listener of [...this.listeners[event]] as Array<(...a: RecognitionEvents[K]) => void>) {
      try {
        listener(...args);
      } catch (err) {
        queueMicrotask(() => {
          throw err;
        });
      }
    }
  }
}

/** States in which a stream drops pushed audio silently by default: the engine died while it was in flight. */
const IGNORE_AUDIO_WHEN_FAILED: ReadonlySet<RecognitionState> = new Set(['failed']);

/**
 * What every adapter's {@link RecognitionStream} shares, written once: its listeners, its state,
 * and the port's rules for {@link RecognitionStream.push} and {@link RecognitionStream.finish}
 * (the type check, audio after a failure dropped, a push after `finish()`/`cancel()` refused, a
 * `finish()` after `cancel()` refused, `finish()` idempotent). Subclasses say what audio and the
 * end of speech do ({@link accept}, {@link onFinish}) and how a stream is abandoned (`cancel`).
 */
export abstract class BaseRecognitionStream implements RecognitionStream {
  protected readonly events = new StreamEvents();
  protected current: RecognitionState = 'open';
  /** States in which {@link push} drops audio instead of throwing; default `failed` only. */
  protected readonly ignoreAudioIn: ReadonlySet<RecognitionState> = IGNORE_AUDIO_WHEN_FAILED;
  abstract readonly options: Readonly<RecognitionOptions>;

  get state(): RecognitionState {
    return this.current;
  }

  on<K extends keyof RecognitionEvents>(event: K, listener: (...args: RecognitionEvents[K]) => void): () => void {
    return this.events.on(event, listener);
  }

  push(pcm: Int16Array): void {
    if (!(pcm instanceof Int16Array)) throw new TypeError('push takes mono PCM16 samples as an Int16Array');
    if (this.ignoreAudioIn.has(this.current)) return;
    if (this.current !== 'open') throw new Error(`cannot push audio into a recognition stream that is ${this.current}`);
    this.accept(pcm);
  }

  finish(): void {
    if (this.current === 'cancelled') throw new Error('cannot finish a cancelled recognition stream');
    if (this.current !== 'open') return;
    this.current = 'finishing';
    this.onFinish();
  }

  abstract cancel(): void;

  /** Audio pushed while the stream is `open` (already type-checked). */
  protected abstract accept(pcm: Int16Array): void;

  /** `finish()` was called on an open stream; the state is now `finishing`. */
  protected abstract onFinish(): void;
}
