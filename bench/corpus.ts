/**
 * The synthetic corpus both recall benches use: texts of 8 words from a vocabulary of VOCAB
 * words, so each word appears in about N*8/VOCAB texts, and two-word queries over it.
 */
export const VOCAB = 5000;
export const word = (i: number) => `w${(i * 2654435761) % 1_000_003}`;
/** The k-th word (0..7) of text i. */
export const wordOf = (i: number, k: number) => word((i * 31 + k * 977) % VOCAB);
export const textFor = (i: number) => Array.from({ length: 8 }, (_, k) => wordOf(i, k)).join(' ');
export const queryFor = (q: number) => `${word((q * 7) % VOCAB)} ${word((q * 13 + 5) % VOCAB)}`;

/** A two-word query whose words occur in the first `corpusSize` texts (so small corpora match too). */
export const queryWithin = (q: number, corpusSize: number) => {
  return `${wordOf((q * 7) % corpusSize, q % 8)} ${wordOf((q * 13 + 5) % corpusSize, (q + 3) % 8)}`;
};

/**
 * Notes that read like a CRM's or an assistant's (bench/scale.ts): who, what about, a ticket
 * number, then `textFor(i)`. Names and topics are skewed as real notes are (the first of each
 * list in about a third of the notes, the last in a few of a thousand), so that queries meet
 * common terms as well as rare ones.
 */
const PEOPLE = [
  'Ana',
  'Marco',
  'Priya',
  'Lena',
  'Tomas',
  'Yuki',
  'Omar',
  'Sofia',
  'Jonas',
  'Mei',
  'Carlos',
  'Ingrid',
  'Kwame',
  'Nadia',
  'Pavel',
  'Rosa',
  'Hiro',
  'Fatima',
  'Lucas',
  'Aisha',
  'Viktor',
  'Elena',
  'Diego',
  'Hana',
  'Samir',
  'Greta',
  'Felix',
  'Amara',
  'Bruno',
  'Leila',
  'Oskar',
  'Zara',
  'Emil',
  'Noor',
  'Rafael',
  'Tessa',
  'Ivan',
  'Chloe',
  'Mateo',
  'Wanda',
];
const VERBS = ['asked about', 'prefers', 'rejected', 'scheduled', 'reviewed', 'mentioned', 'approved', 'disputed'];
const TOPICS = [
  'invoice',
  'refund',
  'delivery window',
  'contract renewal',
  'onboarding checklist',
  'security audit',
  'quarterly budget',
  'damaged shipment',
  'subscription plan',
  'password reset',
  'warehouse inventory',
  'travel booking',
  'payroll schedule',
  'vegetarian menu',
  'parking permit',
  'laptop replacement',
  'office lease',
  'tax filing',
  'insurance claim',
  'conference tickets',
  'data export',
  'support ticket',
  'price increase',
  'release date',
];

/** A well-mixed number in [0, 1) for (i, salt) (a murmur3 finalizer). */
function unit(i: number, salt: number): number {
  let h = Math.imul(i ^ Math.imul(salt, 0x9e3779b9), 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return (h >>> 0) / 2 ** 32;
}
const skewed = (list: readonly string[], u: number) => list[Math.floor(list.length * u ** 3)] as string;
export const personOf = (i: number) => skewed(PEOPLE, unit(i, 1));
export const topicOf = (i: number) => skewed(TOPICS, unit(i, 2));
export const noteFor = (i: number) =>
  `${personOf(i)} ${VERBS[i % VERBS.length]} the ${topicOf(i)} (ticket ${i}): ${textFor(i)}.`;

/**
 * A query about notes `a` and `b` of a scope: even `q`, two of their rare words; odd `q`, the
 * person and topic of `a` (common terms) and one rare word of `b`, as a person asks ("Ana
 * invoice w123").
 */
export const noteQuery = (q: number, a: number, b: number) =>
  q % 2 === 0
    ? `${wordOf(a, q % 8)} ${wordOf(b, (q + 3) % 8)}`
    : `${personOf(a)} ${topicOf(a)} ${wordOf(b, (q + 3) % 8)}`;
