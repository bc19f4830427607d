// What a repository method runs its SQL on: the database, or the transaction a service opened.
import type { Kysely, Transaction } from 'kysely';
import type { Database } from './schema.js';

export type Executor = Kysely<Database> | Transaction<Database>;
