/**
 * One engine process of the embedded recogniser (./pocketsphinx.ts): what it decodes with, the
 * arguments and model files it runs on, and how to tell it has opened its audio pipe or to end
 * it. The pool of processes is the recogniser's; a stream's use of one is ./pocketsphinx-stream.ts.
 *
 * Front end: the model's `feat.params` forces a cepstral-mean start value (`-cmninit`) that
 * command-line options cannot override, and it suits telephone speech badly (the first words
 * are lost: "nine eight seven" → "oh nine eight eight one"). {@link engineArgs} writes a model
 * directory of links to the real model files with its own `feat.params` (a mean measured on
 * telephone-band speech); the recogniser runs the engine with `-dither yes -seed 1` (digital
 * silence — decoded μ-law gaps — otherwise breaks the noise estimate; the fixed seed keeps
 * results reproducible).
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { dictionaryFor, GRAMMARS } from './pocketsphinx-grammars.js';
import type { RecognitionGrammar } from '../../media/recognizer.js';

/** What an engine process decodes with: a step grammar, or the phone loop that scores grammar hypotheses. */
export type EngineKind = RecognitionGrammar | 'phones';
/** Sample rate the en-us acoustic model was trained on, Hz. */
export const ENGINE_RATE = 16000;
/** Cepstral-mean start value measured on telephone-band speech (13 coefficients). */
const CMN_INIT = '55.4,-0.1,-5.1,26.6,-10.5,-4.1,-6.7,-19.1,2.1,-14.1,6.3,-6.7,-1.4';

/** One engine process: warm (loaded, waiting) until a stream takes it. */
export interface Engine {
  child: ChildProcess;
  /** The named pipe the engine reads its audio from. */
  fifo: string;
  /**
   * Our end of the FIFO, opened read-write and non-blocking before the engine starts (so neither
   * side waits for the other), until a stream wraps it; -1 once handed over or closed. While it
   * is open the engine never sees end-of-file; when this process dies it closes, the engine reads
   * end-of-file and exits. An engine still loading its model then would instead block for ever in
   * its own open() of the FIFO (no writer is left to open it): so engines start under
   * `setpriv --pdeathsig KILL` where util-linux's setpriv is installed, and die with the thread
   * that started them. Either way no engine outlives its media worker.
   */
  fd: number;
  grammar: EngineKind;
  exited: boolean;
  /** Set by the stream that took it. */
  owner?: { abandon(): void };
}

/**
 * The engine arguments for `grammar`, writing what they name under `workDir` (the model directory
 * with its own `feat.params`, the grammar and its dictionary) when not there yet.
 * @param workDir the recogniser's directory for generated model files
 * @param model   the model directory of Debian's `pocketsphinx-en-us` (see pocketsphinx-status.ts)
 */
export function engineArgs(workDir: string, model: string, grammar: EngineKind): string[] {
  const hmm = path.join(workDir, 'hmm');
  if (!fs.existsSync(hmm)) {
    fs.mkdirSync(hmm, { recursive: true });
    for (const f of fs.readdirSync(path.join(model, 'en-us'))) {
      if (f !== 'feat.params') fs.symlinkSync(path.join(model, 'en-us', f), path.join(hmm, f));
    }
    const params = fs
      .readFileSync(path.join(model, 'en-us', 'feat.params'), 'utf8')
      .split('\n')
      .filter((l) => !l.startsWith('-cmninit'));
    fs.writeFileSync(path.join(hmm, 'feat.params'), `${params.join('\n').trimEnd()}\n-cmninit ${CMN_INIT}\n`);
  }
  let args: string[];
  if (grammar === 'free') {
    args = ['-hmm', hmm, '-lm', path.join(model, 'en-us.lm.bin'), '-dict', path.join(model, 'cmudict-en-us.dict')];
  } else if (grammar === 'phones') {
    // Context-independent phones: a CD phone loop runs at ~5× real time on the build machine, CI
    // at 0.04×. Language weight 1: with the default 6.5 the phone LM's weighting leaks into the
    // `ascr` the backtrace reports (it comes out above zero, which no acoustic score can).
    args = ['-hmm', hmm, '-allphone', path.join(model, 'en-us-phone.lm.bin'), '-allphone_ci', 'yes', '-lw', '1'];
  } else {
    const source = GRAMMARS[grammar];
    const gram = path.join(workDir, `${grammar}.gram`);
    const dict = path.join(workDir, `${grammar}.dict`);
    fs.writeFileSync(gram, source.jsgf);
    fs.writeFileSync(
      dict,
      dictionaryFor(source.words, fs.readFileSync(path.join(model, 'cmudict-en-us.dict'), 'utf8'), new Set(source.names ?? [])),
    );
    args = ['-hmm', hmm, '-jsgf', gram, '-dict', dict];
    // Names: no filler words between grammar words, or a weak last syllable turns into silence
    // ("priya sharma" heard as "priya shah" once trailing silence follows). The other grammars
    // do better with them (digits and yes/no lose their first word without).
    if (grammar === 'name') args.push('-fsgusefiller', 'no');
  }
  return args;
}

/** Whether the engine process has its FIFO open (Linux `/proc/<pid>/fd`, proc(5)). */
export function hasOpened(e: Engine): boolean {
  try {
    const dir = `/proc/${e.child.pid}/fd`;
    return fs.readdirSync(dir).some((fd) => {
      try {
        return fs.readlinkSync(`${dir}/${fd}`) === e.fifo;
      } catch {
        return false;
      }
    });
  } catch {
    return false; // gone: its exit reports it
  }
}

/** Ends an engine process (SIGKILL: it holds no state worth saving) and waits for its exit. */
export function killEngine(e: Engine): Promise<void> {
  if (e.exited || e.child.exitCode !== null || e.child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    e.child.once('exit', () => resolve());
    e.child.kill('SIGKILL');
  });
}
