/**
 * The file a media worker writes a call's recording to (docs/media.md "Recordings"): the
 * recorder's bytes appended as they come (in writes of about a second of audio), its final
 * header written over the first bytes on close. A disk error stops this call's recording (the
 * partial file is removed) and never the call.
 */
import fs from 'node:fs';
import type { RecordingSink } from '../../media/recorder.js';

/** A {@link RecordingSink} writing `file` (created 0600, replaced if it exists). */
export class RecordingFile implements RecordingSink {
  private fd: number | null;
  private failed = false;

  /**
   * @param file    absolute path of the WAV
   * @param onError told once when the recording failed (the message names no caller data)
   * @throws Error when the file cannot be created
   */
  constructor(
    private readonly file: string,
    private readonly onError: (message: string) => void = () => {},
  ) {
    this.fd = fs.openSync(file, 'w', 0o600);
  }

  write(bytes: Uint8Array): void {
    if (this.fd === null) return;
    try {
      fs.writeSync(this.fd, bytes);
    } catch (err) {
      this.fail(err);
    }
  }

  finish(header: Uint8Array): void {
    if (this.fd === null) return;
    try {
      fs.writeSync(this.fd, header, 0, header.length, 0);
      fs.closeSync(this.fd);
      this.fd = null;
    } catch (err) {
      this.fail(err);
    }
  }

  private fail(err: unknown): void {
    if (this.failed) return;
    this.failed = true;
    try {
      if (this.fd !== null) fs.closeSync(this.fd);
    } catch {
      // Closed already.
    }
    this.fd = null;
    fs.rmSync(this.file, { force: true });
    this.onError(`the recording could not be written: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}
