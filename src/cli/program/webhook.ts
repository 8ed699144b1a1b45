/**
 * `vagent webhook …`: signed event webhooks (add, list, show, rm, test, rotate-secret, replay).
 *
 * Each action imports its handler lazily, so a command loads only the modules it uses.
 */
import { type Command } from 'commander';
import { action, examples, yesOption } from '../command-kit.js';
import { eventsGroup } from './events.js';

const webhookCmd = () => import('../commands/webhook.js');

/** Declares the `webhook` command group on `program`. */
export function registerWebhookCommands(program: Command): void {
  const webhook = program
    .command('webhook')
    .description('webhooks: your systems hear of every call event, signed (Standard Webhooks), in order per call')
    .addHelpText(
      'after',
      `
Each delivery is a POST of the event object (the same as GET /v1/events shows) with the headers
webhook-id (the event id: de-duplicate on it), webhook-timestamp and webhook-signature; verify
them with any Standard Webhooks library and the endpoint's whsec_… secret. A receiver that does
not answer 2xx is retried with growing waits for 3 days; then the endpoint shows as failing.`,
    );
  examples(
    webhook
      .command('add')
      .argument('<url>', 'https URL that receives the events (http and private addresses only with the inbound_webhook_allow_* settings)')
      .option('--events <patterns>', 'event types or patterns, comma-separated (default: * for all), e.g. call.*,session.ended')
      .description('add a webhook endpoint; prints its signing secret, the only time it is shown'),
    'vagent webhook add https://crm.example.com/hooks/vagent',
    'vagent webhook add https://crm.example.com/hooks/vagent --events call.ended,session.ended',
    'vagent webhook add https://crm.example.com/hooks/vagent --json | jq -r .secret > vagent-webhook.secret',
  ).action(action(webhookCmd, (m) => m.add));
  examples(
    webhook.command('list').alias('ls').description('list webhook endpoints: failing or not, deliveries pending, the latest attempt'),
    'vagent webhook list',
    'vagent webhook list --json | jq -r \'.data[] | select(.status == "failing") | .id\'',
  ).action(action(webhookCmd, (m) => m.list));
  examples(
    webhook
      .command('show')
      .argument('<endpoint-id>', 'we_… id')
      .description('show one webhook endpoint: its status, deliveries pending, the latest attempt and error'),
    'vagent webhook show we_3x7kq2m4n5p6r7s2t4va',
  ).action(action(webhookCmd, (m) => m.show));
  examples(
    yesOption(
      webhook
        .command('rm')
        .alias('remove')
        .argument('<endpoint-id>', 'we_… id')
        .description('delete a webhook endpoint and its pending deliveries'),
    ),
    'vagent webhook rm we_3x7kq2m4n5p6r7s2t4va --yes',
  ).action(action(webhookCmd, (m) => m.rm));
  examples(
    webhook
      .command('test')
      .argument('<endpoint-id>', 'we_… id')
      .description(
        "send a signed webhook.test delivery now and print the receiver's status (exit 1 unless 2xx); a 2xx makes the deliveries waiting out the receiver's outage due now",
      ),
    'vagent webhook test we_3x7kq2m4n5p6r7s2t4va',
  ).action(action(webhookCmd, (m) => m.test));
  examples(
    webhook
      .command('rotate-secret')
      .argument('<endpoint-id>', 'we_… id')
      .description('give an endpoint a new secret; the old one also signs for 24 hours (two signatures)'),
    'vagent webhook rotate-secret we_3x7kq2m4n5p6r7s2t4va',
  ).action(action(webhookCmd, (m) => m.rotateSecret));
  examples(
    webhook
      .command('replay')
      .argument('[event-id]', 'evt_… id of one event to send again')
      .option('--since <duration>', 'send again every event of the last 90s, 15m, 1h30m, 2d … (at most 7d)')
      .option('--endpoint <endpoint-id>', 'only to this endpoint (default: every endpoint that selects the event)')
      .description('send events again: one, or those of a recent period'),
    'vagent webhook replay evt_000000000042',
    'vagent webhook replay --since 2h --endpoint we_3x7kq2m4n5p6r7s2t4va',
  ).action(action(webhookCmd, (m) => m.replay));
  // The same, where the event log's commands are.
  examples(
    eventsGroup(program)
      .command('replay')
      .argument('[event-id]', 'evt_… id of one event to send again')
      .option('--since <duration>', 'send again every event of the last 90s, 15m, 1h30m, 2d … (at most 7d)')
      .option('--endpoint <endpoint-id>', 'only to this endpoint (default: every endpoint that selects the event)')
      .description('send events to the webhook endpoints again: one, or those of a recent period (as vagent webhook replay)'),
    'vagent events replay evt_000000000042',
    'vagent events replay --since 2h',
  ).action(action(webhookCmd, (m) => m.replay));
}
