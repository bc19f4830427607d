// `npm run openapi`: prints the OpenAPI 3.1 document generated from the route schemas (the one the
// service serves at GET /api/openapi.json), without starting a server.
import { openapiDocument } from './openapi-document.js';

process.stdout.write(`${JSON.stringify(await openapiDocument(), null, 2)}\n`);
