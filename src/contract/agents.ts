/**
 * `/v1/agents`: agent definitions applied by id, and a session opened on one (docs/agents.md;
 * docs/api-decisions.md "Agents").
 */
import { z } from 'zod';
import { deletedOf, idField, listOf } from './common.js';
import { openFields } from './sessions.js';

/** `{agent_id}` path parameters: a malformed id is `workflow_not_found` (docs/api-decisions.md "Errors"). */
export const AgentParams = z.object({ agent_id: idField('agent', 'workflow_not_found') });
/** `PUT /v1/agents/{agent_id}` path parameters: the agent is being created, so a malformed id is `invalid_request`. */
export const PutAgentParams = z.object({ agent_id: idField('agent', 'invalid_request') });

/** `POST /v1/agents/{agent_id}/load` body (the agent id is the path's). */
export const LoadAgentBody = z.object({ ...openFields }, { error: 'request body must be a JSON object' });
/** A `POST /v1/agents/{agent_id}/load` body as sent. */
export type LoadAgentRequest = z.input<typeof LoadAgentBody>;

const AudioStatus = z.object({
  total: z.number().int(),
  ready: z.number().int(),
  failed: z.number().int(),
  /**
   * Why clips failed when the agent's cloud voice failed, with the fix (`voice: elevenlabs has
   * no API key on the daemon (set ELEVENLABS_API_KEY)`, `voice: sarvam answered 400 (check
   * voice.speaker and voice.model)`); absent otherwise.
   */
  failure: z.string().optional(),
});
/**
 * Pre-synthesis progress of an agent's static texts (runs in the background after a PUT): clips
 * to synthesise, ready, failed, and why a cloud voice failed (`failure`).
 */
export type AgentAudioProgress = z.infer<typeof AudioStatus>;

/** The Agent resource; `definition` (the stored definition, defaults applied) is left out of lists. */
export const AgentSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    direction: z.enum(['inbound', 'outbound']),
    language: z.string(),
    version: z.number().int(),
    digest: z.string(),
    created_at: z.number(),
    updated_at: z.number(),
    audio: AudioStatus,
    definition: z.looseObject({}).optional(),
    /**
     * `PUT` only: what is valid but likely a mistake, each with the field it is about
     * (`llm.model` not priced in config/pricing.yaml, so its cost would show as 0; `voice.provider`
     * a cloud voice the daemon has no API key for). Never a reason to refuse.
     */
    warnings: z.array(z.object({ param: z.string(), message: z.string() })).optional(),
  })
  .meta({ id: 'Agent' });
/**
 * An agent as `PUT`/`GET /v1/agents/{agent_id}` return it: `id` `ag_[a-z0-9_]{1,64}` chosen by
 * the operator, `language` a BCP-47 tag, `version` 1 on the first apply and +1 on each change,
 * `digest` the SHA-256 (hex) of the stored definition, times in epoch seconds, and `definition`.
 */
export type Agent = z.infer<typeof AgentSchema>;
/** An agent as `GET /v1/agents` lists it: the summary fields, without the definition. */
export type AgentSummary = Omit<Agent, 'definition'>;

/** `GET /v1/agents` page, sorted by id. */
export const AgentListSchema = listOf(AgentSchema);

/** `PUT /v1/agents/{agent_id}` body: the agent definition (validated by the service, with field paths). */
export const PutAgentBody = z.record(z.string(), z.unknown(), {
  error: 'request body must be the agent definition as a JSON object',
});

/** `DELETE /v1/agents/{agent_id}` response. */
export const AgentDeletedSchema = deletedOf('id', z.string());
/** `{id, deleted: true}`. */
export type AgentDeleted = z.infer<typeof AgentDeletedSchema>;
