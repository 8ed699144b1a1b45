/**
 * `vagent serve`, `vagent login` and `vagent logout`: running the daemon and saving the credentials
 * later commands use.
 *
 * Each action imports its handler lazily, so a command loads only the modules it uses.
 */
import { type Command } from 'commander';
import { action, examples } from '../command-kit.js';
import { settingsEnvGroups } from '../../config/env-names.js';

const serveCmd = () => import('../commands/serve.js');
const authCmd = () => import('../commands/login.js');

/**
 * The environment variables of `vagent serve` for its help: one paragraph per group of
 * `settingsEnvGroups` (the list the settings loader reads), each wrapped to 80 columns.
 */
function serveEnvHelp(): string {
  return settingsEnvGroups()
    .map((g) => {
      const lines: string[] = [];
      let line = `  ${g.title} (${g.doc}):`;
      for (const name of g.names) {
        if (line.length + 1 + name.length > 80) {
          lines.push(line);
          line = '   ';
        }
        line += ` ${name}`;
      }
      return [...lines, line].join('\n');
    })
    .join('\n');
}

/** Declares `serve`, `login` and `logout` on `program`. */
export function registerDaemonCommands(program: Command): void {
  program
    .command('serve')
    .description('run the daemon: serves the /v1 API from a state directory')
    .option('--host <host>', 'interface to listen on (default 127.0.0.1; env VAGENT_HOST)')
    .option('--port <port>', 'TCP port (default 8787; env VAGENT_PORT)')
    .option('--state-dir <dir>', 'state directory (env VAGENT_STATE_DIR; default ~/.local/share/vagent)')
    .option('--config <file>', 'settings file, YAML or JSON (env VAGENT_CONFIG); see config/vagent.example.yaml')
    .addHelpText(
      'after',
      () => `
Settings: flags > environment > config file > defaults. Environment variables:
${serveEnvHelp()}

Logs are JSON lines on stdout; hints for people on stderr. SIGTERM/SIGINT drain in-flight requests.

Examples:
  $ vagent serve
  $ vagent serve --port 9000 --state-dir /var/lib/vagent
  $ VAGENT_AUTH_MODE=enforce vagent serve --config /etc/vagent/vagent.yaml`,
    )
    .action(action(serveCmd, (m) => m.serve));

  program
    .command('login')
    .description('save the daemon address and an API key for later commands')
    .option('--api-key-stdin', 'read the API key from stdin instead of prompting')
    .addHelpText(
      'after',
      `
The key is checked against the daemon, then kept in the OS keychain, or in
~/.config/vagent/credentials.json (mode 0600) where no keychain service runs.

Examples:
  $ vagent login --url http://127.0.0.1:8787
  $ vagent admin key create --tenant default | vagent login --url http://127.0.0.1:8787 --api-key-stdin`,
    )
    .action(action(authCmd, (m) => m.login));

  examples(
    program.command('logout').description('forget the API key saved for the daemon address'),
    'vagent logout',
    'vagent logout --url https://vagent.example.in',
  ).action(action(authCmd, (m) => m.logout));
}
