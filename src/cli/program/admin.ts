/**
 * `vagent admin …`: local administration of a state dir (tenants, API keys, audit, the audio cache,
 * the database, purge and export); these commands open the state dir themselves.
 *
 * Each action imports its handler lazily, so a command loads only the modules it uses.
 */
import { Option, type Command } from 'commander';
import { action, adminOptions, examples } from '../command-kit.js';

const adminCmd = () => import('../commands/admin.js');
const adminTenantCmd = () => import('../commands/admin-tenant.js');
const adminDataCmd = () => import('../commands/admin-data.js');
const adminCacheCmd = () => import('../commands/admin-cache.js');
const adminDbCmd = () => import('../commands/admin-db.js');

/** Declares the `admin` command group on `program`. */
export function registerAdminCommands(program: Command): void {
  const admin = program.command('admin').description('local administration of a state dir (works while the daemon runs)');
  const tenant = admin.command('tenant').description('tenants');
  adminOptions(
    examples(
      tenant.command('create').argument('<name>', 'lowercase slug, e.g. acme-collections').description('create a tenant'),
      'vagent admin tenant create acme-collections',
      'vagent admin tenant create sunrise-clinic --state-dir /var/lib/vagent',
    ),
  ).action(action(adminTenantCmd, (m) => m.tenantCreate));
  adminOptions(
    tenant
      .command('set')
      .argument('<name>', 'tenant name, e.g. acme-collections')
      .description("set a tenant's daily budget, retention, call recording, transcript redaction and inbound routing webhook")
      .option('--budget-inr <inr>', 'daily budget in rupees; 0 = no budget for this tenant; "default" = the instance setting applies')
      .option(
        '--retention-days <days>',
        'days its sessions, calls and audit events are kept; 0 = for ever; "default" = the instance\'s retention_days',
      )
      .option(
        '--redact-transcripts <mode>',
        'what its events and webhooks leave out of transcripts: off (default), digits (masked), text (left out)',
      )
      .option(
        '--recording <mode>',
        'record its phone calls: off, mono (both parties mixed), dual (caller left, agent right); "default" = not set; an agent\'s own recording wins',
      )
      .option('--inbound-webhook <url>', 'https URL asked which agent answers an inbound call; "none" removes it and its secret')
      .option('--webhook-secret-stdin', 'read the webhook signing secret from stdin (default: generate one and print it once)')
      .addHelpText(
        'after',
        `
The webhook receives signed JSON: header vagent-signature: t=<unix seconds>,v1=<hex HMAC-SHA256
(secret, "<t>.<raw body>")>. A generated secret (whsec_…) is printed only by this command.
Plain http and private addresses are refused unless VAGENT_INBOUND_WEBHOOK_ALLOW_HTTP /
VAGENT_INBOUND_WEBHOOK_ALLOW_PRIVATE allow them.

Examples:
  $ vagent admin tenant set acme-collections --budget-inr 500
  $ vagent admin tenant set acme-collections --retention-days 90
  $ vagent admin tenant set acme-collections --redact-transcripts digits
  $ vagent admin tenant set acme-collections --recording dual
  $ vagent admin tenant set acme-collections --inbound-webhook https://crm.acme.in/vagent/route
  $ printf %s "$ROUTING_SECRET" | vagent admin tenant set acme-collections --inbound-webhook https://crm.acme.in/vagent/route --webhook-secret-stdin
  $ vagent admin tenant set acme-collections --budget-inr default --inbound-webhook none --json`,
      ),
  ).action(action(adminTenantCmd, (m) => m.tenantSet));
  adminOptions(
    examples(
      tenant.command('show').argument('<name>', 'tenant name').description("show a tenant's budget and webhook (never its secret)"),
      'vagent admin tenant show acme-collections',
      'vagent admin tenant show default --json',
    ),
  ).action(action(adminTenantCmd, (m) => m.tenantShow));
  adminOptions(
    examples(tenant.command('list').alias('ls').description('list tenants'), 'vagent admin tenant list', 'vagent admin tenant list --json'),
  ).action(action(adminTenantCmd, (m) => m.tenantList));
  const key = admin.command('key').description('API keys');
  adminOptions(
    key
      .command('create')
      .description('issue an API key (printed once on stdout)')
      .addOption(new Option('--tenant <name>', 'tenant the key acts for').default('default'))
      .addHelpText(
        'after',
        '\nExamples:\n  $ vagent admin key create --tenant default\n  $ export VAGENT_API_KEY=$(vagent admin key create --tenant acme-collections)',
      ),
  ).action(action(adminCmd, (m) => m.keyCreate));
  adminOptions(
    examples(
      key
        .command('list')
        .alias('ls')
        .description('list API keys (ids and hints, never secrets)')
        .option('--tenant <name>', 'only this tenant'),
      'vagent admin key list',
      'vagent admin key list --tenant acme-collections',
    ),
  ).action(action(adminCmd, (m) => m.keyList));
  adminOptions(
    examples(
      key.command('revoke').argument('<key-id>', 'key_… id from `vagent admin key list`').description('revoke an API key'),
      'vagent admin key revoke key_2m4n5p6r7s8t',
    ),
  ).action(action(adminCmd, (m) => m.keyRevoke));
  adminOptions(
    admin
      .command('audit')
      .description('cross-tenant accesses recorded in auth_mode audit')
      .option('--tenant <name>', 'only events where this tenant is caller or owner')
      .option('--limit <n>', 'most recent N events (default 50)')
      .addHelpText('after', '\nExamples:\n  $ vagent admin audit\n  $ vagent admin audit --tenant acme-collections --limit 200 --json'),
  ).action(action(adminCmd, (m) => m.audit));
  const cache = admin.command('cache').description('the audio cache: static clips kept, dynamic clips bounded by a cap');
  adminOptions(
    cache
      .command('stats')
      .description('clips and bytes by class, the cap and where it comes from, bytes over it')
      .addHelpText(
        'after',
        `
Static clips are the agents' pre-synthesised texts (openings, questions, FAQ answers, digits):
kept for good. Dynamic clips are synthesised live (a name or a number read back, a prompt with
the customer's name): the daemon evicts the least recently used beyond audio_cache_max_mb
(default 5% of the state dir's disk, 256 MiB–16 GiB), never within audio_url_keep_hours
(default 24) of their last use nor while their session is open. Reads only.

Examples:
  $ vagent admin cache stats
  $ vagent admin cache stats --state-dir /var/lib/vagent --json | jq .dynamic`,
      ),
  ).action(action(adminCacheCmd, (m) => m.cacheStats));
  adminOptions(
    cache
      .command('prune')
      .description('evict dynamic clips down to the cap now, least recently used first')
      .option('--dry-run', 'report what would be removed; remove nothing')
      .addHelpText(
        'after',
        `
The daemon does this by itself in the background; prune is for a daemon that is stopped or a
cap just lowered. From outside the daemon, prune cannot see open sessions, so it removes only
dynamic clips unused for audio_url_keep_hours + 2 hours (a running daemon notices, and never
hands out the URL of a removed clip: the next turn that needs one synthesises it again).
Static clips are never removed. The cap and keep window are read from the same settings as
vagent serve (--config, VAGENT_AUDIO_CACHE_MAX_MB, VAGENT_AUDIO_URL_KEEP_HOURS).

Examples:
  $ vagent admin cache prune --dry-run
  $ VAGENT_AUDIO_CACHE_MAX_MB=1024 vagent admin cache prune --json`,
      ),
  ).action(action(adminCacheCmd, (m) => m.cachePrune));
  const db = admin.command('db').description("the state database's size and disk space");
  adminOptions(
    db
      .command('stats')
      .description('file and WAL size, free pages, auto-vacuum mode and rows per table (works while the daemon runs)')
      .addHelpText(
        'after',
        `
Free pages are space SQLite holds for reuse. With auto-vacuum "incremental" (every database
created by this version), the daemon gives them back to the disk in the background, a little at
a time; with "none" (a database created by an older vagent and too big to convert at start-up)
they are never given back until \`vagent admin db vacuum\` converts the file once.
Counting rows reads every table: up to a second per million rows when they are not in memory.

Examples:
  $ vagent admin db stats
  $ vagent admin db stats --state-dir /var/lib/vagent --json | jq '{file_bytes, free_pages, auto_vacuum}'`,
      ),
  ).action(action(adminDbCmd, (m) => m.stats));
  adminOptions(
    db
      .command('vacuum')
      .description('convert the database to incremental auto-vacuum and compact it (the daemon must be stopped)')
      .addHelpText(
        'after',
        `
Rewrites the whole file (SQLite VACUUM), so it refuses while a daemon serves the state dir, and
needs free disk of about twice the live data (checked first; SQLite's temporary copy goes in the
state dir unless SQLITE_TMPDIR names another directory). About 4 s per 256 MiB on a small VPS.
A database created by this version never needs it: its free pages are given back in the
background. \`vagent serve\` says at start-up when it is worth running.

Examples:
  $ vagent admin db vacuum --state-dir /var/lib/vagent      # after stopping vagent serve
  $ vagent admin db vacuum --json | jq '{before_bytes, after_bytes}'
  $ sudo systemctl stop vagent && sudo -u vagent vagent admin db vacuum --state-dir /var/lib/vagent && sudo systemctl start vagent`,
      ),
  ).action(action(adminDbCmd, (m) => m.vacuum));

  adminOptions(
    admin
      .command('purge')
      .description('delete sessions, calls and events older than a date (works while the daemon runs)')
      .option('--before <date>', 'cut-off: YYYY-MM-DD (start of that day in the timezone setting) or an ISO 8601 time with offset')
      .option(
        '--tenant <name>',
        "only this tenant's sessions, calls and audit events (default: every tenant, and telephony events and unused agent revisions)",
      )
      .option('--dry-run', 'count what would be deleted, per table, and change nothing')
      .addHelpText(
        'after',
        `
Deletes ended sessions created before the cut-off with their turns and calls, audit events and
processed telephony events recorded before it, and agent revisions applied before it that no
agent and no remaining session uses. Never an open session, nor a call whose line may still be
up. Daily spend already counted stays counted. The retention_days settings do not apply here:
the cut-off is the one given. Deletes in small batches, so the daemon keeps serving meanwhile;
the API then answers not_found for a purged session or call.

Archive first, then purge with the same cut-off:
  $ vagent admin export --before 2026-01-01 --output sessions-2025.jsonl
  $ vagent admin purge --before 2026-01-01

Examples:
  $ vagent admin purge --before 2026-01-01 --dry-run
  $ vagent admin purge --before 2026-01-01T00:00:00+05:30 --tenant acme-collections
  $ vagent admin purge --before 2025-10-01 --json`,
      ),
  ).action(action(adminDataCmd, (m) => m.purge));
  adminOptions(
    admin
      .command('export')
      .description('write sessions with their turns and calls as JSON lines (an archive before purging)')
      .option('--tenant <name>', "only this tenant's sessions (default: every tenant)")
      .option(
        '--since <date>',
        'sessions created at or after: YYYY-MM-DD (start of that day in the timezone setting) or an ISO 8601 time with offset',
      )
      .option('--before <date>', 'sessions created before: the same forms')
      .option('-o, --output <file>', 'write to this new file, mode 0600 (default: stdout)')
      .option('--force', 'overwrite --output when it exists')
      .option('--recordings <dir>', "also copy each call's recording to this directory (cl_N.wav); each line then names its recording_file")
      .addHelpText(
        'after',
        `
One line per session, oldest first: the session as GET /v1/sessions/{id} shows it (its turns
and the session object), its tenant, and calls: its call as GET /v1/calls/{id} shows it. No
keys or credentials. With --output, --json prints {"sessions", "output"} when done.
To archive what a purge deletes, export then purge with the same --before.

Examples:
  $ vagent admin export --before 2026-01-01 --output sessions-2025.jsonl
  $ vagent admin export --tenant acme-collections --since 2025-12-01 --before 2026-01-01 | gzip > acme-2025-12.jsonl.gz
  $ vagent admin export --since 2025-12-01T00:00:00Z --output dec.jsonl --json
  $ vagent admin export --before 2026-01-01 --output sessions-2025.jsonl --recordings recordings-2025`,
      ),
  ).action(action(adminDataCmd, (m) => m.exportSessionsCommand));
}
