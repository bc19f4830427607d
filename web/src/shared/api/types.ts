// Types of the generated OpenAPI schema (npm run web:types) that every app uses.
import type { paths } from './schema.js';

export type Schemas = paths;
export type User = paths['/api/auth/me']['get']['responses'][200]['content']['application/json'];
export type Role = User['role'];
