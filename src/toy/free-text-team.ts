/**
 * What the toy model makes of a team given as free text (a task's v0 in the official repository's form): the agents
 * of the JSON list such a text holds (`agent_id` or `id`, `role`, `instruction`), or, when the text has no list, a
 * small team of its own (an analyst, then a reporter). The orchestrator is the listed agent whose id or role says it
 * leads; when none does, a lead is added. Ids are kept as written for the episode; `structuredId` turns them into
 * the ids a structured design allows.
 */

export interface FreeTextAgent {
  id: string;
  role: string;
  instruction: string;
  isOrchestrator: boolean;
}

export interface FreeTextTeam {
  /** Whether the agents come from a list in the text (false: the toy's own default team). */
  listed: boolean;
  orchestrator: FreeTextAgent;
  /** In the order the text lists them. */
  subagents: FreeTextAgent[];
}

const LEADS = /orchestrat|coordinat|\blead\b|leader|manager|principal investigator/i;

export function readFreeTextTeam(text: string): FreeTextTeam {
  const listed = agentList(text);
  if (!listed || listed.length === 0) return defaultTeam();
  const leadIndex = listed.findIndex((agent) => LEADS.test(agent.id) || LEADS.test(agent.role));
  const orchestrator =
    leadIndex >= 0
      ? { ...listed[leadIndex]!, isOrchestrator: true }
      : {
          // Not an id the text already uses.
          id: listed.some((agent) => structuredId(agent.id) === 'lead') ? 'team-lead' : 'lead',
          role: 'Lead who plans the work and delegates it.',
          instruction: 'Delegate each part to the agent it belongs to and check every report.',
          isOrchestrator: true,
        };
  const subagents = listed.filter((_, index) => index !== leadIndex);
  if (subagents.length === 0) return { ...defaultTeam(), orchestrator };
  return { listed: true, orchestrator, subagents };
}

function defaultTeam(): FreeTextTeam {
  return {
    listed: false,
    orchestrator: {
      id: 'lead',
      role: 'Lead who plans the work and delegates it.',
      instruction: 'Delegate the analysis, then the report; check every report.',
      isOrchestrator: true,
    },
    subagents: [
      {
        id: 'analyst',
        role: 'Analyst who runs the analysis.',
        instruction: 'Analyse the data and write the result files.',
        isOrchestrator: false,
      },
      {
        id: 'reporter',
        role: 'Writer who reports the results.',
        instruction: 'Read the result files and write the report.',
        isOrchestrator: false,
      },
    ],
  };
}

/** `agent_data_curator` → `agent-data-curator`: lowercase letters, digits and hyphens, starting with a letter. */
export function structuredId(id: string): string {
  const cleaned = id
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return /^[a-z]/.test(cleaned) ? cleaned : `agent-${cleaned || 'x'}`;
}

/** The first JSON array in the text whose items are agents; undefined when there is none. */
function agentList(text: string): FreeTextAgent[] | undefined {
  for (const span of arraySpans(text)) {
    let value: unknown;
    try {
      value = JSON.parse(span);
    } catch {
      continue;
    }
    if (!Array.isArray(value) || value.length === 0) continue;
    const agents = value.map(readAgent);
    if (agents.every((agent): agent is FreeTextAgent => agent !== undefined)) return unique(agents);
  }
  return undefined;
}

function readAgent(item: unknown): FreeTextAgent | undefined {
  if (item === null || typeof item !== 'object') return undefined;
  const record = item as Record<string, unknown>;
  const id = record.agent_id ?? record.id;
  if (typeof id !== 'string' || id.trim() === '') return undefined;
  const text = (value: unknown) => (typeof value === 'string' ? value.replace(/\s+/g, ' ').trim() : '');
  return {
    id: id.trim(),
    role: text(record.role) || id.trim(),
    instruction: text(record.instruction) || `Do the work of ${id.trim()}.`,
    isOrchestrator: false,
  };
}

/** Agents whose ids collide once made structured keep the first. */
function unique(agents: FreeTextAgent[]): FreeTextAgent[] {
  const seen = new Set<string>();
  return agents.filter((agent) => {
    const id = structuredId(agent.id);
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}

/** Balanced `[…]` spans, aware of JSON strings, outermost first. */
function arraySpans(text: string): string[] {
  const spans: string[] = [];
  for (let start = text.indexOf('['); start >= 0; start = text.indexOf('[', start + 1)) {
    let depth = 0;
    let inString = false;
    let escaped = false;
    for (let index = start; index < text.length; index++) {
      const character = text[index];
      if (inString) {
        if (escaped) escaped = false;
        else if (character === '\\') escaped = true;
        else if (character === '"') inString = false;
        continue;
      }
      if (character === '"') inString = true;
      else if (character === '[') depth++;
      else if (character === ']' && --depth === 0) {
        spans.push(text.slice(start, index + 1));
        break;
      }
    }
  }
  return spans;
}
