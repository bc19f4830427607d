// Routes of the auth module (registered under /api by app.ts).
import type { FeatureModule } from '../../http/context.js';

export const authModule: FeatureModule = async (_app, _ctx) => {
  // Routes are added by the work on this module.
};
