/**
 * Audio playback for `vagent chat`'s `/play`: the reply's WAV is downloaded to a temp file and
 * handed to the first command-line player found on PATH. Nothing is bundled: where no player
 * is installed, the caller prints the URL instead.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** A command-line audio player and the arguments that make it play one file and exit quietly. */
export interface Player {
  command: string;
  args: string[];
}

/** Players tried in order: ALSA, PulseAudio, macOS, SoX, FFmpeg. */
export const PLAYERS: readonly Player[] = [
  { command: 'aplay', args: ['-q'] },
  { command: 'paplay', args: [] },
  { command: 'afplay', args: [] },
  { command: 'play', args: ['-q'] },
  { command: 'ffplay', args: ['-nodisp', '-autoexit', '-loglevel', 'error'] },
];

/** True when `file` exists and is executable. */
function executable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * The first of {@link PLAYERS} found on `PATH`.
 * @param envPath the search path (default `$PATH`)
 * @returns the player, or null when none is installed
 */
export function findPlayer(envPath: string = process.env.PATH ?? ''): Player | null {
  const dirs = envPath.split(path.delimiter).filter(Boolean);
  for (const player of PLAYERS) {
    if (dirs.some((d) => executable(path.join(d, player.command)))) return player;
  }
  return null;
}

/**
 * Plays one audio file and waits until the player exits.
 * @throws Error when the player cannot start or exits with a non-zero status
 */
export function playFile(player: Player, file: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(player.command, [...player.args, file], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (s: string) => {
      stderr += s;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve();
      else reject(new Error(`${player.command} exited with status ${code}${stderr ? `: ${stderr.trim().split('\n')[0]}` : ''}`));
    });
  });
}

/** The result of {@link playUrls}. */
export type PlayResult = { played: true; player: string } | { played: false };

/**
 * Downloads each URL in turn to a private temp dir and plays it; the files are removed after.
 * @param urls    clip or reply audio URLs, played in order
 * @param download fetches one URL's bytes (the API client's `downloadAudio`)
 * @param player  the player to use (default: {@link findPlayer})
 * @returns `{played: false}` when no player is installed (nothing is downloaded then)
 * @throws whatever `download` or {@link playFile} throws
 */
export async function playUrls(
  urls: string[],
  download: (url: string) => Promise<Uint8Array>,
  player: Player | null = findPlayer(),
): Promise<PlayResult> {
  if (!player) return { played: false };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vagent-play-'));
  try {
    for (const [i, url] of urls.entries()) {
      const file = path.join(dir, `clip-${i}.wav`);
      fs.writeFileSync(file, await download(url), { mode: 0o600 });
      await playFile(player, file);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return { played: true, player: player.command };
}
