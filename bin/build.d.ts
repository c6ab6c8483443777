/** The checkout (or image) root bin/ sits in. */
export const ROOT: string;
/** `root`/dist when it was built after the last change to what it compiles and bundles, else undefined. */
export function currentBuild(root?: string): string | undefined;
/** Makes `root`/dist current (builds it when missing or stale); `say` gets the progress lines. */
export function ensureBuild(root?: string, say?: (line: string) => void): void;
