// Types of scripts/build.mjs, which is plain JavaScript so that `npm start` needs no tsx.
export declare const distDir: string;
export declare const externalPackages: readonly string[];
export declare function isStale(): boolean;
export declare function build(): Promise<void>;
/** The bundle's esbuild options, written to `outdir`. */
export declare function bundleOptions(outdir: string): import('esbuild').BuildOptions;
