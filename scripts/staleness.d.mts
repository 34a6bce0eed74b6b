export declare const INPUTS_FILE: string;
export declare function isStale(outDir: string, bundles: string[]): boolean;
export declare function withBuildLock<T>(lockPath: string, fn: () => T): T;
