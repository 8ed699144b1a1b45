/**
 * ITU-T G.711 μ-law and A-law ↔ PCM16 for the media core (./audio.ts dispatches to it by
 * encoding): Twilio's and Plivo's `audio/x-mulaw`, and A-law. Pure, no I/O; the tables are
 * constant after module load, so a call's media can run in a worker thread.
 *
 * G.711 (ITU-T Recommendation G.711, "Pulse code modulation (PCM) of voice frequencies", 1988,
 * Tables 1a/2a for A-law and 1b/2b for μ-law). The segment search follows the public-domain
 * reference g711.c by Sun Microsystems, scaled to 16-bit input as in the `alawmulaw` codec that
 * `wavefile` bundles (https://github.com/rochars/alawmulaw), which the tests use as an oracle.
 * Encoding is a 64 Ki-entry table lookup and decoding a 256-entry one, built once per module
 * instance (constant after that, so safe to share inside a worker).
 */

const MULAW_BIAS = 0x84; // 132: the μ-law bias, in 16-bit units
const MULAW_CLIP = 32635; // largest magnitude before the bias would overflow the top segment

/** μ-law code of one 16-bit sample (G.711 Table 2b; Sun g711.c `linear2ulaw`). */
function mulawOf(sample: number): number {
  let mask = 0xff;
  let x = sample;
  if (x < 0) {
    x = -x;
    mask = 0x7f;
  }
  if (x > MULAW_CLIP) x = MULAW_CLIP;
  x += MULAW_BIAS;
  let seg = 0;
  for (let v = x >> 8; v > 0 && seg < 7; v >>= 1) seg++; // position of the top bit above bit 7
  const mantissa = (x >> (seg + 3)) & 0x0f;
  return ((seg << 4) | mantissa) ^ mask;
}

/** 16-bit value of one μ-law code (G.711 Table 2b; Sun g711.c `ulaw2linear`): the segment's midpoint. */
function linearOfMulaw(code: number): number {
  const u = ~code & 0xff;
  const t = (((u & 0x0f) << 3) + MULAW_BIAS) << ((u & 0x70) >> 4);
  return u & 0x80 ? MULAW_BIAS - t : t - MULAW_BIAS;
}

/** A-law code of one 16-bit sample (G.711 Table 1a; Sun g711.c `linear2alaw`, even bits inverted). */
function alawOf(sample: number): number {
  let x = sample >> 3; // 13-bit
  let mask = 0xd5; // sign bit set (positive) and even bits inverted
  if (x < 0) {
    mask = 0x55;
    x = -x - 1;
  }
  let seg = 0;
  while (seg < 8 && x > (0x20 << seg) - 1) seg++; // segment ends 0x1F, 0x3F, … 0xFFF
  if (seg >= 8) return 0x7f ^ mask;
  const mantissa = seg < 2 ? (x >> 1) & 0x0f : (x >> seg) & 0x0f;
  return ((seg << 4) | mantissa) ^ mask;
}

/** 16-bit value of one A-law code (G.711 Table 1a; Sun g711.c `alaw2linear`): the segment's midpoint. */
function linearOfAlaw(code: number): number {
  const a = (code ^ 0x55) & 0xff;
  let t = (a & 0x0f) << 4;
  const seg = (a & 0x70) >> 4;
  if (seg === 0) t += 8;
  else if (seg === 1) t += 0x108;
  else t = (t + 0x108) << (seg - 1);
  return a & 0x80 ? t : -t;
}

function encodeTable(of: (sample: number) => number): Uint8Array {
  const table = new Uint8Array(65536);
  for (let i = 0; i < 65536; i++) table[i] = of(i - 32768);
  return table;
}
function decodeTable(of: (code: number) => number): Int16Array {
  const table = new Int16Array(256);
  for (let c = 0; c < 256; c++) table[c] = of(c);
  return table;
}
const MULAW_ENCODE = encodeTable(mulawOf);
const MULAW_DECODE = decodeTable(linearOfMulaw);
const ALAW_ENCODE = encodeTable(alawOf);
const ALAW_DECODE = decodeTable(linearOfAlaw);

/**
 * PCM16 → G.711 μ-law (ITU-T G.711 μ-law, as Twilio's and Plivo's `audio/x-mulaw`): one byte
 * per sample. 0 → 0xFF; 32767 → 0x80; −32768 → 0x00. Magnitudes above 32635 saturate.
 */
export function encodeMulaw(pcm: Int16Array): Uint8Array {
  const out = new Uint8Array(pcm.length);
  for (let i = 0; i < pcm.length; i++) out[i] = MULAW_ENCODE[pcm[i]! + 32768]!;
  return out;
}

/** G.711 μ-law → PCM16: one sample per byte; 0xFF and 0x7F → 0, 0x80 → 32124, 0x00 → −32124. */
export function decodeMulaw(bytes: Uint8Array): Int16Array {
  const out = new Int16Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) out[i] = MULAW_DECODE[bytes[i]!]!;
  return out;
}

/** PCM16 → G.711 A-law (even bits inverted, as on the wire): 0 → 0xD5; 32767 → 0xAA; −32768 → 0x2A. */
export function encodeAlaw(pcm: Int16Array): Uint8Array {
  const out = new Uint8Array(pcm.length);
  for (let i = 0; i < pcm.length; i++) out[i] = ALAW_ENCODE[pcm[i]! + 32768]!;
  return out;
}

/** G.711 A-law → PCM16: one sample per byte; 0xD5 → 8, 0xAA → 32256, 0x2A → −32256. */
export function decodeAlaw(bytes: Uint8Array): Int16Array {
  const out = new Int16Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) out[i] = ALAW_DECODE[bytes[i]!]!;
  return out;
}
