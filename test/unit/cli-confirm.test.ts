/**
 * The question before a delete (src/cli/prompt.ts `confirmDelete`; README.md "Removing trunks and
 * numbers"), with in-memory streams standing in for the terminal.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { CliError, EXIT, UsageError } from '../../src/cli/errors.js';
import { confirmDelete } from '../../src/cli/prompt.js';

/** A fake terminal: `answer` is typed once the question has been written. */
function terminal(answer: string | null, isTTY = true) {
  const input = Object.assign(new PassThrough(), { isTTY });
  const output = new PassThrough();
  let asked = '';
  output.on('data', (b: Buffer) => {
    asked += b.toString('utf8');
    if (answer === null) input.end();
    else input.write(`${answer}\n`);
  });
  return { streams: { input, output }, asked: () => asked };
}

describe('confirmDelete', () => {
  it('asks on a terminal and goes on for y or yes', async () => {
    for (const answer of ['y', 'yes', 'Y', ' YES ']) {
      const t = terminal(answer);
      await expect(confirmDelete('trunk tk_1', undefined, t.streams)).resolves.toBeUndefined();
      expect(t.asked()).toBe('Delete trunk tk_1? [y/N] ');
    }
  });

  it('anything else, or the end of input, cancels with exit 1 and code cancelled', async () => {
    for (const answer of ['', 'n', 'no', 'yep', null]) {
      const t = terminal(answer);
      const err = await confirmDelete('number +911140001234', undefined, t.streams).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(CliError);
      expect(err).toMatchObject({ exitCode: EXIT.error, code: 'cancelled', message: 'number +911140001234 not deleted' });
    }
  });

  it('--yes skips the question, terminal or not', async () => {
    const t = terminal('n');
    await confirmDelete('agent ag_x', true, t.streams);
    expect(t.asked()).toBe('');
    await confirmDelete('agent ag_x', true, terminal('n', false).streams);
  });

  it('without a terminal and without --yes it is a usage error (exit 2) naming --yes', async () => {
    const t = terminal('y', false);
    const err = await confirmDelete('agent ag_x', undefined, t.streams).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as UsageError).exitCode).toBe(EXIT.usage);
    expect((err as Error).message).toMatch(/not deleting agent ag_x: stdin is not a terminal.*--yes/);
    expect(t.asked()).toBe('');
  });
});
