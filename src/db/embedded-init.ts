// Child process of openEmbedded: creates the embedded data directory (initdb) and exits.
import { PGlite } from '@electric-sql/pglite';
import { EMBEDDED_POSTGRESQL_CONF } from './embedded.js';

const db = await PGlite.create(process.argv[2], { postgresqlconf: EMBEDDED_POSTGRESQL_CONF });
await db.close();
