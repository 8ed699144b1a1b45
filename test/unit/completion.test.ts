/**
 * `vagent completion zsh|fish`: the scripts are generated from the commander
 * program, so every command path, alias and option of the program appears in them. (The bash
 * script is run for real in test/cli/completion.test.ts; zsh and fish need not be installed, so
 * their scripts are checked by structure here.)
 */
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { completionScript } from '../../src/cli/completion.js';
import { buildProgram } from '../../src/cli/main.js';

/** `[path, command]` for every command under `cmd` (canonical names, space-separated). */
function commandsOf(cmd: Command, path = ''): Array<[string, Command]> {
  return cmd.commands.flatMap((c) => {
    const p = path ? `${path} ${c.name()}` : c.name();
    return [[p, c] as [string, Command], ...commandsOf(c, p)];
  });
}

const program = buildProgram();
const all = commandsOf(program);

describe('vagent completion zsh', () => {
  const script = completionScript(program, 'zsh');

  it('is a #compdef function that registers itself with compdef', () => {
    expect(script.startsWith('#compdef vagent\n')).toBe(true);
    expect(script).toMatch(/^_vagent\(\) \{$/m);
    expect(script).toMatch(/^ {2}_describe -t commands 'vagent' items$/m);
    expect(script).toMatch(/^ {2}compdef _vagent vagent$/m);
  });

  it('has a branch for every command, offering its subcommands, aliases and options with descriptions', () => {
    expect(all.length).toBeGreaterThan(30);
    for (const [path, cmd] of all) {
      const parent = path.includes(' ') ? path.slice(0, path.lastIndexOf(' ')) : '';
      for (const word of [cmd.name(), ...cmd.aliases()]) {
        expect(script, `${path} via ${word}`).toContain(`'${parent}|${word}') p='${path}' ;;`);
      }
      const branch = script.split('\n').find((l) => l.startsWith(`    '${path}') items=(`));
      expect(branch, path).toBeDefined();
      for (const o of cmd.options) expect(branch, `${path} ${o.long}`).toContain(`'${o.long}:`);
      for (const sub of cmd.commands) expect(branch, `${path} ${sub.name()}`).toContain(`'${sub.name()}:`);
    }
    const top = script.split('\n').find((l) => l.startsWith("    '') items=("))!;
    expect(top).toContain("'trunk:SIP trunks\\: your carrier connections'");
    expect(top).toContain("'--json:print the API response object as JSON'");
    expect(script).toContain("'completion') items=('bash:bash' 'zsh:zsh' 'fish:fish'");
  });
});

describe('vagent completion fish', () => {
  const script = completionScript(program, 'fish');

  it('defines the path helpers and clears earlier vagent completions', () => {
    for (const fn of ['__vagent_next', '__vagent_path', '__vagent_at']) expect(script).toMatch(new RegExp(`^function ${fn}$`, 'm'));
    expect(script).toMatch(/^complete -c vagent -e$/m);
    expect(script.match(/^function /gm)).toHaveLength(script.match(/^end$/gm)!.length);
  });

  it('completes every command, alias and option under the right parent', () => {
    for (const [path, cmd] of all) {
      const parent = path.includes(' ') ? path.slice(0, path.lastIndexOf(' ')) : '';
      const at = `-n '__vagent_at \\'${parent}\\''`;
      for (const word of [cmd.name(), ...cmd.aliases()]) {
        expect(script, `${path} via ${word}`).toContain(`complete -c vagent -f ${at} -a '${word}' -d `);
        expect(script).toContain(`        case '${parent}|${word}'\n            echo '${path}'`);
      }
      for (const o of cmd.options) {
        const flag = `complete -c vagent -n '__vagent_at \\'${path}\\'' -l '${o.long!.slice(2)}'`;
        expect(script, `${path} ${o.long}`).toContain(flag);
      }
    }
    expect(script).toContain("complete -c vagent -n '__vagent_at \\'agent apply\\'' -l 'file' -s 'f' -r -F -d ");
    expect(script).toContain("complete -c vagent -f -n '__vagent_at \\'completion\\'' -a 'fish'");
  });
});
