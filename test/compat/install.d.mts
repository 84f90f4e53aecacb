export declare const APPS: Record<string, { packages: Record<string, string>; fixtures?: string[] }>;
export declare const CACHE: string;
export declare function packTarball(): Promise<{ tarball: string; hash: string; dir: string }>;
export declare function installCompatApps(names?: string[]): Promise<Record<string, string>>;
