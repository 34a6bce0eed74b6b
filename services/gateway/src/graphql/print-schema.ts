import { lexicographicSortSchema, printSchema } from './graphql-js';
import { graphqlSchema } from './schema';

/** `schema/schema.graphql`: the SDL printed from the builder, types and fields sorted. */
export function printGraphqlSchema(): string {
  return `${printSchema(lexicographicSortSchema(graphqlSchema()))}\n`;
}
