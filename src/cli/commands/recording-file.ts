/**
 * A recording saved while its call is still on the line (`vagent call recording`): the daemon
 * writes a WAV file as the call plays and fixes its header's sizes when the call ends
 * (docs/media.md "Recordings"), so a copy taken before then says its data is 0 bytes long and
 * players read no samples. The copy's sizes are set to what it holds (the RIFF chunk and the
 * `data` chunk, RIFF/WAVE as Microsoft's multimedia file format defines them), cut to whole
 * sample frames, so the part recorded so far plays.
 */

/** What {@link completeWavSizes} did. */
export interface WavCopy {
  /** The bytes to save: `bytes` itself, or a copy with its sizes set. */
  bytes: Buffer;
  /** True when the header's sizes did not match the bytes (a recording still being written) and were set. */
  fixed: boolean;
}

/**
 * Sets the RIFF and `data` chunk sizes of a WAV file's copy to the bytes it holds, when they say
 * otherwise (a header not yet fixed: 0, or more than there is). A `data` chunk must be the last
 * chunk, as in vagent's recordings; anything that is not such a WAV file is returned unchanged.
 * @param bytes the downloaded file
 * @returns the bytes to save and whether they were fixed. Never throws.
 */
export function completeWavSizes(bytes: Buffer): WavCopy {
  const same = { bytes, fixed: false };
  if (bytes.length < 44 || bytes.toString('latin1', 0, 4) !== 'RIFF' || bytes.toString('latin1', 8, 12) !== 'WAVE') return same;
  let blockAlign = 1;
  let off = 12;
  while (off + 8 <= bytes.length) {
    const id = bytes.toString('latin1', off, off + 4);
    const size = bytes.readUInt32LE(off + 4);
    if (id === 'fmt ' && off + 22 <= bytes.length) blockAlign = Math.max(1, bytes.readUInt16LE(off + 20));
    if (id === 'data') {
      const start = off + 8;
      const held = bytes.length - start;
      const whole = held - (held % blockAlign);
      if (size === whole && bytes.readUInt32LE(4) === start + whole - 8) return same;
      if (size !== 0 && size <= held) return same; // a complete file with something after its data
      const out = Buffer.from(bytes.subarray(0, start + whole));
      out.writeUInt32LE(whole, off + 4);
      out.writeUInt32LE(out.length - 8, 4);
      return { bytes: out, fixed: true };
    }
    off += 8 + size + (size % 2);
  }
  return same;
}
