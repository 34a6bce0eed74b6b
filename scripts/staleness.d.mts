export declare const INPUTS_FILE: string;
export declare function isStale(outDir: string, bundles: string[]): boolean;
