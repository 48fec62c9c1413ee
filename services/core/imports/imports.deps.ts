import type { Runtime } from '../../../shared/runtime.js';
import type { ImportDeps } from './slack-import.js';

/** What an import or export uses of a running stack (the worker's job, the tests). */
export const importDepsOf = (rt: Runtime): ImportDeps => ({
  db: rt.db,
  s3: rt.s3,
  bucket: rt.config.s3.bucket,
  log: rt.log,
  events: rt.events,
  jobs: rt.jobs,
  baseUrl: rt.config.publicBaseUrl,
  allowPrivate: rt.config.eventDelivery.allowPrivate,
  outbound: rt.outbound,
  pages: rt.pages,
  blockRules: { trackerHosts: rt.config.trackerHosts, codeHosts: rt.config.codeHosts },
});
