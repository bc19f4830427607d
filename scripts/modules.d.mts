export const modules: Record<string, { imports: string[]; about: string }>;
export const never: [string, string, string][];
export function folderOf(name: string): string;
export function moduleOf(path: string): string | undefined;
export function cycles(graph: Map<string, string[]>): string[][];
export function declarationProblems(declared?: Record<string, { imports: string[]; about: string }>): string[];
