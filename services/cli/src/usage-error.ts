/** A call whose words are off: the CLI prints the usage and exits 2 (other failures exit 1). */
export class UsageError extends Error {}
