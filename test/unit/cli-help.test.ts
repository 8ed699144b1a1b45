import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/main.js';
import { settingsEnvNames } from '../../src/config/env-names.js';

function leaves(cmd: Command, prefix: string[] = []): Array<{ name: string; cmd: Command }> {
  const subs = cmd.commands.filter((c) => c.name() !== 'help');
  if (subs.length === 0) return [{ name: prefix.join(' '), cmd }];
  return subs.flatMap((c) => leaves(c, [...prefix, c.name()]));
}

function helpOf(cmd: Command): string {
  let out = '';
  cmd.configureOutput({
    writeOut: (s) => {
      out += s;
    },
    writeErr: (s) => {
      out += s;
    },
  });
  cmd.outputHelp();
  return out;
}

describe('vagent --help', () => {
  const program = buildProgram();
  const all = leaves(program);

  it('covers the operator commands of this build', () => {
    expect(all.map((l) => l.name)).toEqual(
      expect.arrayContaining([
        'serve',
        'login',
        'trunk add',
        'trunk list',
        'trunk show',
        'trunk rm',
        'number add',
        'number list',
        'number bind',
        'number rm',
        'admin tenant create',
        'admin tenant list',
        'admin key create',
        'admin key list',
        'admin key revoke',
        'admin audit',
        'agent apply',
        'agent list',
        'agent show',
        'agent rm',
        'chat',
        'session show',
        'session end',
        'call place',
        'call show',
        'call list',
        'call hangup',
        'telephony check',
        'admin tenant set',
        'admin tenant show',
        'admin cache stats',
        'admin cache prune',
        'admin db stats',
        'admin db vacuum',
        'carrier set',
        'carrier list',
        'carrier rm',
        'carrier token',
      ]),
    );
  });

  it.each(leaves(buildProgram()).map((l) => [l.name, l.cmd] as const))('`vagent %s --help` shows examples', (_name, cmd) => {
    const help = helpOf(cmd);
    expect(help).toMatch(/Examples:\n {2}\$ vagent /);
    expect(help).toContain('--json');
  });

  it('the top-level help teaches with a carrier SIP address and Indian DIDs', () => {
    const help = helpOf(program);
    expect(help).toMatch(/sip\.example-carrier\.in/);
    expect(help).toMatch(/\+91\d{10}/);
    expect(help).toContain('Exit codes');
  });

  it('trunk add and number add help show a carrier address and an Indian DID', () => {
    const byName = new Map(all.map((l) => [l.name, l.cmd]));
    expect(helpOf(byName.get('trunk add')!)).toMatch(/--address sip\.example-carrier\.in .*\+91\d{10}/);
    expect(helpOf(byName.get('number add')!)).toMatch(/vagent number add \+91\d{10}/);
  });

  it('agent apply help shows -f with a file and a directory, and how problems are reported', () => {
    const help = helpOf(new Map(all.map((l) => [l.name, l.cmd])).get('agent apply')!);
    expect(help).toContain('-f, --file <path>');
    expect(help).toMatch(/\$ vagent agent apply -f config\/agents\/ag_clinic_booking\.yaml\n/);
    expect(help).toMatch(/\$ vagent agent apply -f config\/agents\/\n/);
    expect(help).toContain('FILE:LINE:COL');
    expect(help).toContain('--no-wait');
    expect(help).toContain('--dry-run');
  });

  it('serve help names every environment variable the settings loader reads, in its groups', () => {
    const help = helpOf(new Map(all.map((l) => [l.name, l.cmd])).get('serve')!);
    const shown = new Set(help.match(/\b[A-Z][A-Z0-9_]+[A-Z0-9]\b/g));
    const names = settingsEnvNames();
    for (const name of [
      'VAGENT_LLM_BASE_URL',
      'VAGENT_LLM_MODEL',
      'VAGENT_LLM_API_KEY',
      'SARVAM_API_KEY',
      'ELEVENLABS_API_KEY',
      'DEEPGRAM_API_KEY',
    ]) {
      expect(names).toContain(name);
    }
    expect(names.filter((n) => !shown.has(n))).toEqual([]);
    expect(help).toMatch(/language model \(docs\/llm\.md\):\s+VAGENT_LLM_BASE_URL/);
    expect(help).toMatch(/speech recognition and cloud voices[^:]*:[^]*SARVAM_API_KEY[^]*ELEVENLABS_API_KEY/);
    expect(Math.max(...help.split('\n').map((l) => l.length))).toBeLessThanOrEqual(100);
  });

  it('chat help explains the three modes and the slash commands', () => {
    const help = helpOf(new Map(all.map((l) => [l.name, l.cmd])).get('chat')!);
    for (const s of [
      '/end',
      '/state',
      '/play',
      '/help',
      'Ctrl-D',
      'JSON Lines',
      '--now <iso>',
      '--context <json>',
      '--customer-phone <e164>',
    ]) {
      expect(help).toContain(s);
    }
    expect(help).toMatch(/--customer-phone \+91\d{10}/);
  });

  it('the top-level quick start applies the example agents and chats with one', () => {
    const help = helpOf(program);
    expect(help).toContain('$ vagent agent apply -f config/agents/');
    expect(help).toContain('$ vagent chat ag_clinic_booking');
  });
});
