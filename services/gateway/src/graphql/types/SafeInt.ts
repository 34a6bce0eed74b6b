import { builder } from '../builder';
import { GraphQLError, Kind } from '../graphql-js';

function check(value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
    throw new GraphQLError('SafeInt must be an integer between -(2^53 - 1) and 2^53 - 1');
  }
  return value;
}

/** Commit sequences and generations reach 2^53 - 1, past GraphQL's 32-bit `Int`. */
export const SafeInt = builder.scalarType('SafeInt', {
  description: 'An integer that JSON carries exactly: -(2^53 - 1) to 2^53 - 1.',
  serialize: (value) => check(value),
  parseValue: (value) => check(value),
  parseLiteral: (node) => {
    if (node.kind !== Kind.INT) throw new GraphQLError('SafeInt must be an integer literal');
    return check(Number(node.value));
  },
});
