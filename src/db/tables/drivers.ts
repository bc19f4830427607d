// Kysely types of the tables this module owns (see src/db/migrations).
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface DriverTables {}
