/**
 * The options of a simulated carrier call ({@link simulateCall}) checked before anything is
 * connected, each error naming the option or step at fault.
 */
import { checkSimParameters, defaultSimFormat } from '../../media/carriers/sim-frames.js';
import type { SimClientOptions } from './sim-script.js';

const DTMF = /^[0-9*#A-Da-d]+$/;

/**
 * Checks the options of a simulated call: the URL's scheme, the dialect and its audio format,
 * the custom parameters, and each step (delays ≥ 0, a line's audio given once and in the
 * stream's format, DTMF keys).
 * @throws RangeError naming the first bad one
 */
export function checkSimOptions(o: SimClientOptions): void {
  if (!/^wss?:\/\//i.test(o.url)) throw new RangeError(`url must start with ws:// or wss://: ${JSON.stringify(o.url)}`);
  if (!['twilio', 'exotel', 'plivo'].includes(o.dialect)) throw new RangeError(`unknown dialect ${JSON.stringify(o.dialect)}`);
  if (o.format) {
    const { encoding, sampleRate } = o.format;
    const ok =
      encoding === 'mulaw'
        ? sampleRate === 8000
        : encoding === 'pcm16' &&
          (o.dialect === 'exotel' ? [8000, 16000, 24000] : o.dialect === 'plivo' ? [8000, 16000] : []).includes(sampleRate);
    if (!ok)
      throw new RangeError(
        `${o.dialect} does not stream ${String(encoding)} at ${String(sampleRate)} Hz (Twilio: mulaw 8000; Exotel: pcm16 8000/16000/24000 or mulaw 8000; Plivo: mulaw 8000 or pcm16 8000/16000)`,
      );
  }
  checkSimParameters(o.customParameters ?? {});
  for (const [i, s] of o.steps.entries()) {
    const where = `step ${i + 1} (${s.kind})`;
    if (s.kind === 'say' || s.kind === 'dtmf') {
      if (s.afterReplyMs !== undefined && s.bargeInAfterMs !== undefined)
        throw new RangeError(`${where}: afterReplyMs and bargeInAfterMs do not go together`);
      for (const v of [s.afterReplyMs, s.bargeInAfterMs])
        if (v !== undefined && !(v >= 0)) throw new RangeError(`${where}: delays must be ≥ 0 ms`);
    }
    if (s.kind === 'say') {
      if ((s.pcm === undefined) === (s.prepared === undefined)) throw new RangeError(`${where}: give pcm or prepared, not both or neither`);
      if (s.pcm !== undefined && (!(s.pcm instanceof Int16Array) || s.pcm.length === 0))
        throw new RangeError(`${where}: pcm must be non-empty 16-bit samples`);
      if (s.prepared) {
        const f = o.format ?? defaultSimFormat(o.dialect);
        if (
          s.prepared.dialect !== o.dialect ||
          s.prepared.format.encoding !== f.encoding ||
          s.prepared.format.sampleRate !== f.sampleRate
        ) {
          throw new RangeError(
            `${where}: the prepared line is for ${s.prepared.dialect} ${s.prepared.format.encoding} ${s.prepared.format.sampleRate} Hz, not this stream's format`,
          );
        }
      }
    } else if (s.kind === 'dtmf') {
      if (!DTMF.test(s.digits)) throw new RangeError(`${where}: digits must be 0-9, *, #, A-D; got ${JSON.stringify(s.digits)}`);
    } else if (s.kind === 'wait') {
      if (!(s.ms >= 0)) throw new RangeError(`${where}: ms must be ≥ 0`);
    }
  }
}
