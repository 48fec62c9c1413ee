// Writes the OpenAPI document to stdout without starting a server:
// `npm run --silent openapi > openapi.json`. Built from the route tables
// alone, so the output is the same bytes every run (the web app generates its
// typed client from it). FEATURE_LEVEL picks the level it describes, as it does
// for a running server.
import { loadConfig } from '../../shared/config.js';
import { apiRoutes } from './routes.js';
import { buildOpenApi } from './openapi.js';

const { tables } = apiRoutes(loadConfig().featureLevel);
process.stdout.write(`${JSON.stringify(buildOpenApi(tables), null, 2)}\n`);
