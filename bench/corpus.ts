/**
 * The synthetic corpus both recall benches use: texts of 8 words from a vocabulary of VOCAB
 * words, so each word appears in about N*8/VOCAB texts, and two-word queries over it.
 */
export const VOCAB = 5000;
export const word = (i: number) => `w${(i * 2654435761) % 1_000_003}`;
export const textFor = (i: number) => Array.from({ length: 8 }, (_, k) => word((i * 31 + k * 977) % VOCAB)).join(' ');
export const queryFor = (q: number) => `${word((q * 7) % VOCAB)} ${word((q * 13 + 5) % VOCAB)}`;

/** A two-word query whose words occur in the first `corpusSize` texts (so small corpora match too). */
export const queryWithin = (q: number, corpusSize: number) => {
  const wordOf = (i: number, k: number) => word((i * 31 + k * 977) % VOCAB);
  return `${wordOf((q * 7) % corpusSize, q % 8)} ${wordOf((q * 13 + 5) % corpusSize, (q + 3) % 8)}`;
};
