/**
 * Agent files on disk: the example agents shipped in `config/agents/`, loaded into tenant
 * `default` on a fresh state dir.
 */
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { isAgentFileName } from '../domain/agent.js';
import type { AgentService } from './agents.js';
import type { Tx } from './unit-of-work.js';

/** The result of loading one file. */
export interface LoadedAgentFile {
  file: string;
  agentId?: string;
  error?: string;
}

/**
 * Validates and stores every `.yaml`, `.yml` and `.json` agent in `dir` for `tenantId`, in
 * one transaction per file (call outside `Store.write`: it uses `writeNow`).
 * @returns one entry per file; a bad file is reported, not thrown, and stores nothing.
 */
export function loadAgentDir(
  agents: AgentService,
  writeNow: <T>(step: (tx: Tx) => T) => T,
  tenantId: string,
  dir: string,
): LoadedAgentFile[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir).filter(isAgentFileName).sort();
  } catch (err) {
    return [{ file: dir, error: `cannot read ${dir}: ${(err as NodeJS.ErrnoException).code ?? String(err)}` }];
  }
  return names.map((name) => {
    const file = path.join(dir, name);
    try {
      const body = YAML.parse(fs.readFileSync(file, 'utf8')) as unknown;
      const id = (body as { id?: unknown } | null)?.id;
      if (typeof id !== 'string') return { file, error: 'no id' };
      const { agent, digest } = agents.validate(id, body);
      writeNow((tx) => agents.putTx(tx, tenantId, agent, digest));
      return { file, agentId: agent.id };
    } catch (err) {
      return { file, error: (err as Error).message };
    }
  });
}
