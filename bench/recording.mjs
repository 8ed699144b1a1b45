/**
 * `npm run build && node bench/recording.mjs`: the size and CPU of a call recording
 * (src/media/recorder.ts through src/media/recording-transport.ts; docs/media.md "Recordings").
 *
 * One minute of a call, mono and dual: the caller's 16 kHz audio in 20 ms chunks and the agent's
 * μ-law 8 kHz frames (Twilio's format, so every frame is decoded and resampled) for half of it,
 * on a fake clock; the sink counts bytes (no disk). Reports the file's bytes per minute and the
 * recorder's CPU per call-minute (the media worker's share of one core per recorded call).
 */
import { performance } from 'node:perf_hooks';
import { RecordingTransport } from '../dist/media/recording-transport.js';
import { FakeClock } from '../dist/media/fake-clock.js';
import { FakeTransport } from '../dist/media/fake-transport.js';
import { encodeMulaw } from '../dist/media/audio-g711.js';

const RUNS = 5;
for (const channels of ['mono', 'dual']) {
  const times = [];
  let bytes = 0;
  for (let run = 0; run < RUNS; run++) {
    const clock = new FakeClock();
    const inner = new FakeTransport({ clock });
    bytes = 0;
    const sink = { write: (b) => void (bytes += b.length), finish: () => {} };
    const t = new RecordingTransport(inner, channels, sink, clock);
    t.listen({ onAudio() {}, onDtmf() {}, onMarkAck() {}, onStop() {} });
    const pcm = Int16Array.from({ length: 320 }, (_, i) => Math.round(8000 * Math.sin(i / 5)));
    const frame = encodeMulaw(Int16Array.from({ length: 160 }, (_, i) => Math.round(8000 * Math.sin(i / 3))));
    const t0 = performance.now();
    for (let i = 0; i < 3000; i++) {
      clock.advance(20);
      inner.pushAudio(pcm.slice());
      if (i % 2 === 0) t.play(frame);
    }
    t.close();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const median = times[Math.floor(RUNS / 2)];
  console.log(
    `${channels}: ${(bytes / 1e6).toFixed(2)} MB per minute (${bytes} bytes with the header); ` +
      `recorder CPU ${median.toFixed(0)} ms per call-minute, median of ${RUNS} (${(median / 600).toFixed(2)}% of one core per recorded call)`,
  );
}
