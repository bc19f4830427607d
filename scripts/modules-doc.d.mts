export const docPath: string;
export const BEGIN: string;
export const END: string;
export function renderModuleMap(declared?: Record<string, { imports: string[]; about: string }>): string;
export function withModuleMap(doc: string, declared?: Record<string, { imports: string[]; about: string }>): string;
