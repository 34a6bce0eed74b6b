export * from './errors';
export * from './limits';
export * from './operation';
export * from './operations';
export * from './operations-lifecycle';
export * from './operations-recall';
export * from './primitives';
export * from './resources';
