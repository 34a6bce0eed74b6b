/**
 * The LoCoMo-shaped data set of the recall benches (/work/shared/bench-data/README.md): its
 * conversations, turns and questions with their repaired gold evidence, the evidence-recall
 * scoreboard, and the bare Okapi BM25 reference over the same turns. Shared by the in-process
 * bench (recall-quality.ts) and the one over HTTP (recall-http.ts), so both score alike.
 */
import fs from 'node:fs';
import { OkapiBm25 } from './okapi-bm25';

/** Items each recall asks for; recall@k is read off the first k. */
export const MAX_ITEMS = 20;
export const CUTOFFS = [5, 10, 20] as const;

export type LedgerKind = 'pglite' | 'postgres';

// ---- the data set ---------------------------------------------------------------------------

export interface Turn {
  diaId: string;
  text: string;
  validFrom: number;
}
export interface Question {
  text: string;
  category: number;
  gold: string[];
}
export interface Conversation {
  sampleId: string;
  turns: Turn[];
  questions: Question[];
}
export interface EvidenceRepairs {
  repaired: number;
  dropped: number;
  questionsWithoutEvidence: number;
}

const MONTHS = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];

/** "1:56 pm on 8 May, 2023" as UTC Unix seconds. */
export function parseSessionDate(text: string): number {
  const match = text.trim().match(/^(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})$/i);
  const month = match ? MONTHS.indexOf((match[5] as string).toLowerCase()) : -1;
  if (!match || month < 0) throw new Error(`unreadable session date: ${text}`);
  const hour12 = Number(match[1]) % 12;
  const hour = (match[3] as string).toLowerCase() === 'pm' ? hour12 + 12 : hour12;
  return Date.UTC(Number(match[6]), month, Number(match[4]), hour, Number(match[2])) / 1000;
}

/**
 * A question's gold turns. The release has a few malformed ids: several in one string
 * ("D8:6; D9:17": split), a stray colon ("D:11:26" -> "D11:26"), a leading zero
 * ("D30:05" -> "D30:5"); an id naming no turn of the conversation is dropped.
 */
export function repairEvidence(raw: readonly string[], turnIds: ReadonlySet<string>, repairs: EvidenceRepairs) {
  const gold = new Set<string>();
  for (const entry of raw) {
    const parts = String(entry)
      .split(/[;,\s]+/)
      .filter(Boolean);
    for (const part of parts) {
      const match = part.match(/^D:?(\d+):(\d+)$/);
      const id = match ? `D${Number(match[1])}:${Number(match[2])}` : null;
      if (id === null || !turnIds.has(id)) {
        repairs.dropped += 1;
        continue;
      }
      if (id !== entry) repairs.repaired += 1;
      gold.add(id);
    }
  }
  return [...gold];
}

export function loadConversations(file: string): { conversations: Conversation[]; repairs: EvidenceRepairs } {
  const data = JSON.parse(fs.readFileSync(file, 'utf8')) as {
    sample_id: string;
    conversation: Record<string, unknown>;
    qa: { question: string; category: number; evidence?: string[] }[];
  }[];
  const repairs: EvidenceRepairs = { repaired: 0, dropped: 0, questionsWithoutEvidence: 0 };
  const conversations = data.map((sample) => {
    const turns: Turn[] = [];
    const sessions = Object.keys(sample.conversation)
      .map((key) => key.match(/^session_(\d+)$/)?.[1])
      .filter((n): n is string => n !== undefined)
      .map(Number)
      .sort((a, b) => a - b);
    for (const n of sessions) {
      const validFrom = parseSessionDate(String(sample.conversation[`session_${n}_date_time`]));
      for (const turn of sample.conversation[`session_${n}`] as { speaker: string; dia_id: string; text: string }[]) {
        turns.push({ diaId: turn.dia_id, text: `${turn.speaker}: ${turn.text}`, validFrom });
      }
    }
    const turnIds = new Set(turns.map((t) => t.diaId));
    const questions: Question[] = [];
    for (const qa of sample.qa) {
      if (qa.category < 1 || qa.category > 4) continue;
      const gold = repairEvidence(qa.evidence ?? [], turnIds, repairs);
      if (gold.length === 0) {
        repairs.questionsWithoutEvidence += 1;
        continue;
      }
      questions.push({ text: String(qa.question), category: qa.category, gold });
    }
    return { sampleId: sample.sample_id, turns, questions };
  });
  return { conversations, repairs };
}

// ---- measuring ------------------------------------------------------------------------------

export interface Tally {
  questions: number;
  recall: Record<(typeof CUTOFFS)[number], number>;
  hit10: number;
}
export const emptyTally = (): Tally => ({ questions: 0, recall: { 5: 0, 10: 0, 20: 0 }, hit10: 0 });

/** Per-category and overall tallies of ranked answers (gold turn ids against ranked turn ids). */
export class Scoreboard {
  readonly byCategory = new Map<number, Tally>();
  readonly overall = emptyTally();

  add(category: number, gold: readonly string[], ranked: readonly string[]): void {
    const tally = this.byCategory.get(category) ?? emptyTally();
    this.byCategory.set(category, tally);
    for (const t of [tally, this.overall]) {
      t.questions += 1;
      for (const k of CUTOFFS) {
        const top = new Set(ranked.slice(0, k));
        t.recall[k] += gold.filter((g) => top.has(g)).length / gold.length;
      }
      const top10 = new Set(ranked.slice(0, 10));
      if (gold.some((g) => top10.has(g))) t.hit10 += 1;
    }
  }

  static summary(t: Tally) {
    const q = Math.max(1, t.questions);
    return {
      questions: t.questions,
      recall_at_5: t.recall[5] / q,
      recall_at_10: t.recall[10] / q,
      recall_at_20: t.recall[20] / q,
      hit_at_10: t.hit10 / q,
    };
  }

  toJson() {
    return {
      overall: Scoreboard.summary(this.overall),
      categories: Object.fromEntries(
        [...this.byCategory.entries()].sort(([a], [b]) => a - b).map(([c, t]) => [c, Scoreboard.summary(t)]),
      ),
    };
  }
}

export const percentile = (sorted: readonly number[], p: number) =>
  sorted.length ? (sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number) : Number.NaN;

export function bm25Reference(conversations: Conversation[]): { board: Scoreboard; rankings: string[][] } {
  const board = new Scoreboard();
  const rankings: string[][] = [];
  for (const c of conversations) {
    const index = new OkapiBm25(1.2, 0.75);
    for (const turn of c.turns) index.add(turn.diaId, turn.text);
    for (const q of c.questions) {
      const ranked = index.search(q.text, MAX_ITEMS);
      board.add(q.category, q.gold, ranked);
      rankings.push(ranked);
    }
  }
  return { board, rankings };
}

// ---- a run ---------------------------------------------------------------------------------

export interface WritePhase {
  seconds: number;
  rate: number;
  /** Commits the semantic arm had not embedded when the writes ended (null: arm off). */
  semanticLagCommits: number | null;
  /** Of those, the memories (texts to embed) among them (null: arm off). */
  semanticLagTexts: number | null;
  /** Seconds from the end of the writes until the semantic arm had caught up (null: arm off). */
  catchUpSeconds: number | null;
}

/** CPU milliseconds per recall by process: the gateway, the builtin model's child, Postgres' backends, the bench's client. */
export interface RecallCpu {
  gateway: number;
  model: number;
  postgres: number;
  client: number;
}

export interface LedgerRun {
  ledger: LedgerKind;
  turns: number;
  /** Writes with the embedded indexer running, the semantic arm on (these are the turns asked). */
  semanticOn: WritePhase;
  /**
   * The same writes into other workspaces with the semantic arm off, once before and once after
   * the `semanticOn` phase, so that neither warm-up nor the ledger's growth favours one side;
   * `rate` is the mean of the two.
   */
  semanticOff: WritePhase & { rates: [number, number] };
  modes: Record<
    string,
    {
      available: boolean;
      retrieval?: unknown;
      latency_ms?: { p50: number; p95: number };
      /** Over HTTP only: CPU milliseconds per recall, by process. */
      cpu_ms_per_recall?: RecallCpu;
    } & object
  >;
  scoreboards: Map<string, Scoreboard>;
  /** Per mode, the ranked turn texts of each question (to compare runs). */
  rankings: Map<string, string[][]>;
}

/** The semantic arm's pace after the writes: texts it still had to embed over the time it took. */
export function catchUpRate(phase: WritePhase): string {
  if (phase.semanticLagTexts === null || phase.catchUpSeconds === null) return 'semantic arm off';
  const rate = phase.catchUpSeconds > 0 ? phase.semanticLagTexts / phase.catchUpSeconds : Number.NaN;
  return `semantic arm ${phase.semanticLagCommits} commits (${phase.semanticLagTexts} texts) behind when the writes ended, caught up ${phase.catchUpSeconds.toFixed(1)} s later (${rate.toFixed(1)} texts/s)`;
}
