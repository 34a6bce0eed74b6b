import { stemmer } from 'stemmer';
import { eng as englishStopWords } from 'stopword';

/**
 * Text analysis of the lexical arm: one place that turns a document or a query into terms, so
 * documents and queries can never be analysed differently. Chosen by measurement on the LoCoMo
 * development split (bench/recall-quality.ts; README, Recall quality): English stop words left
 * out of queries and Porter stemming of English words together raise BM25's evidence recall@10
 * from 0.53 to 0.61 there.
 *
 * - Words are runs of Unicode letters and digits, lowercased.
 * - Words of the ASCII letters a-z are reduced to their Porter stem ("workshops" -> "workshop");
 *   anything holding a digit or another script is kept exactly, so ids, numbers and names in
 *   other scripts match only themselves.
 * - Documents keep every word (stop words too); queries leave the stop words out unless nothing
 *   else is left, so "what is it?" still finds the documents that hold those words.
 */

/** Longest term kept (code points): Postgres refuses lexemes over 2046 bytes; a longer word is cut here on both sides. */
export const MAX_TERM_LENGTH = 255;
/** Most distinct terms one query searches for (the leftover words are ignored). */
export const MAX_QUERY_TERMS = 32;

/** English stop words (the `stopword` package's list): left out of queries, and given to Meilisearch as its stop words. */
export const STOP_WORD_LIST: readonly string[] = englishStopWords;
const STOP_WORDS: ReadonlySet<string> = new Set(STOP_WORD_LIST);
const ENGLISH_WORD = /^[a-z]+$/;
const WORD = /[\p{L}\p{N}]+/gu;

/** Lowercase words of letters and digits, in order, before stop words and stemming. */
export function words(text: string): string[] {
  return text.toLowerCase().match(WORD) ?? [];
}

/** The term a word is indexed and searched under. */
export function termOf(word: string): string {
  const cut = word.length > MAX_TERM_LENGTH ? [...word].slice(0, MAX_TERM_LENGTH).join('') : word;
  return ENGLISH_WORD.test(cut) ? stemmer(cut) : cut;
}

export function isStopWord(word: string): boolean {
  return STOP_WORDS.has(word);
}

/** A document's terms with their frequencies, and its length in words (BM25's document length). */
export interface AnalysedDocument {
  termFrequencies: Map<string, number>;
  length: number;
}

export function analyseDocument(text: string): AnalysedDocument {
  const all = words(text);
  const termFrequencies = new Map<string, number>();
  for (const word of all) {
    const term = termOf(word);
    termFrequencies.set(term, (termFrequencies.get(term) ?? 0) + 1);
  }
  return { termFrequencies, length: all.length };
}

/** A query's distinct terms, in the order typed: its stop words dropped unless the query holds nothing else. */
export function analyseQuery(text: string): string[] {
  const all = words(text);
  const content = all.filter((word) => !isStopWord(word));
  const kept = content.length > 0 ? content : all;
  return [...new Set(kept.map(termOf))].slice(0, MAX_QUERY_TERMS);
}
