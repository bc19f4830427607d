export function sources(dir?: string): string[];
export function staleReason(files?: string[], out?: string): string | undefined;
export function buildServer(files?: string[], out?: string): Promise<{ ok: boolean; message: string }>;
