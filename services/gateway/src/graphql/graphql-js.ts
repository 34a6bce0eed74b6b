import { createRequire } from 'node:module';
import type * as GraphQLJs from 'graphql';

/**
 * graphql-js, loaded exactly as Node resolves it for graphql-yoga and Pothos (its CommonJS
 * build). Importing `graphql` from this package's TypeScript under a bundler-style resolver
 * (vitest) would load its ESM build as a second copy, and graphql-js refuses schemas and
 * errors from "another module or realm". Runtime values come from here; types from `graphql`.
 */
const graphqlJs = createRequire(import.meta.url)('graphql') as typeof GraphQLJs;

export const { GraphQLError, Kind, getOperationAST, lexicographicSortSchema, printSchema, validate, visit } = graphqlJs;
export type GraphQLError = GraphQLJs.GraphQLError;
