/**
 * A bare Okapi BM25 in memory, the reference the recall-quality bench compares the service
 * with: lowercase words of letters and digits, no stemming, no stop words, k1 1.2, b 0.75,
 * idf = ln(1 + (N - df + 0.5) / (df + 0.5)), each distinct query word counted once. Ties go to
 * the document added first.
 */
export const bareWords = (text: string): string[] => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

export class OkapiBm25 {
  private readonly documents: { id: string; frequencies: Map<string, number>; length: number }[] = [];
  private readonly documentFrequency = new Map<string, number>();
  private totalLength = 0;

  constructor(
    private readonly k1 = 1.2,
    private readonly b = 0.75,
  ) {}

  add(id: string, text: string): void {
    const words = bareWords(text);
    const frequencies = new Map<string, number>();
    for (const word of words) frequencies.set(word, (frequencies.get(word) ?? 0) + 1);
    for (const word of frequencies.keys())
      this.documentFrequency.set(word, (this.documentFrequency.get(word) ?? 0) + 1);
    this.documents.push({ id, frequencies, length: words.length });
    this.totalLength += words.length;
  }

  /** Ids of the best `limit` documents with a positive score, best first. */
  search(query: string, limit: number): string[] {
    const n = this.documents.length;
    if (n === 0) return [];
    const average = this.totalLength / n;
    const terms = [...new Set(bareWords(query))].map((term) => {
      const df = this.documentFrequency.get(term) ?? 0;
      return { term, idf: Math.log(1 + (n - df + 0.5) / (df + 0.5)) };
    });
    const scored: { index: number; score: number }[] = [];
    this.documents.forEach((doc, index) => {
      let score = 0;
      for (const { term, idf } of terms) {
        const tf = doc.frequencies.get(term);
        if (tf) score += (idf * tf * (this.k1 + 1)) / (tf + this.k1 * (1 - this.b + (this.b * doc.length) / average));
      }
      if (score > 0) scored.push({ index, score });
    });
    scored.sort((x, y) => y.score - x.score || x.index - y.index);
    return scored.slice(0, limit).map((s) => (this.documents[s.index] as { id: string }).id);
  }
}
