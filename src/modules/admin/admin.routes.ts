// Routes of the admin module (registered under /api by app.ts).
import type { FeatureModule } from '../../http/context.js';

export const adminModule: FeatureModule = async (_app, _ctx) => {
  // Routes are added by the work on this module.
};
