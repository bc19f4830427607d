export function staleReason(): string | undefined;
export function buildWeb(): { ok: boolean; message: string };
