import { z } from 'zod';
import { ToolFailure } from '../api.js';
import { TEMPLATE_FILES } from '../template-files.js';

export const RUNTIMES = ['node', 'cloudflare-workers', 'vercel'] as const;
export type Runtime = (typeof RUNTIMES)[number];

/** Files every runtime shares, copied to a runtime-specific path. */
const SHARED_FILES: Record<Runtime, Record<string, string>> = {
  node: {},
  'cloudflare-workers': { 'src/axid.ts': '_shared/axid.ts' },
  vercel: { 'api/_axid.ts': '_shared/axid.ts' },
};

const GITIGNORE: Record<Runtime, string> = {
  node: 'node_modules/\n.env\n',
  'cloudflare-workers': 'node_modules/\n.wrangler/\n.dev.vars\n',
  vercel: 'node_modules/\n.vercel/\n.env*.local\n',
};

/** An npm package name made from the bot name. */
export function packageName(botName: string): string {
  const slug = botName
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60);
  return slug ? `${slug}-bot`.replace(/-bot-bot$/, '-bot') : 'axid-bot';
}

/**
 * Fills the placeholders: `"__AXID_BOT_NAME__"` (quotes included) becomes a
 * string literal in code; inside JSON strings the name is escaped; elsewhere
 * (prose, comments) it is the name on one line; `__AXID_PACKAGE_NAME__` is
 * always the slug.
 */
function fill(file: string, text: string, botName: string): string {
  const oneLine = botName.replace(/[\r\n\u2028\u2029]+/g, ' ');
  const plain = file.endsWith('.json') ? JSON.stringify(oneLine).slice(1, -1) : oneLine;
  return text
    .replaceAll('"__AXID_BOT_NAME__"', JSON.stringify(botName))
    .replaceAll('__AXID_PACKAGE_NAME__', packageName(botName))
    .replaceAll('__AXID_BOT_NAME__', plain);
}

export function scaffold(botName: string, runtime: Runtime): Record<string, string> {
  const prefix = `${runtime}/`;
  const files: Record<string, string> = {};
  for (const [rel, text] of Object.entries(TEMPLATE_FILES)) {
    if (rel.startsWith(prefix)) files[rel.slice(prefix.length)] = fill(rel, text, botName);
  }
  for (const [target, source] of Object.entries(SHARED_FILES[runtime])) {
    const text = TEMPLATE_FILES[source];
    if (text === undefined) throw new ToolFailure('internal_error', `template ${source} is missing`, 'Reinstall the tool server.');
    files[target] = fill(target, text, botName);
  }
  if (Object.keys(files).length === 0) throw new ToolFailure('internal_error', `no templates for ${runtime}`, 'Reinstall the tool server.');
  files['.gitignore'] = GITIGNORE[runtime];
  return Object.fromEntries(Object.entries(files).sort(([a], [b]) => a.localeCompare(b)));
}

const NEXT_STEPS: Record<Runtime, string> = {
  node: 'Write the files into a new folder, then: AXID_API_KEY=<bot key> AXID_BASE_URL=<server> npm start (Node 20+, nothing to install). Mention the bot in a channel it belongs to.',
  'cloudflare-workers':
    'Write the files into a new folder, then: npm install; set AXID_BASE_URL in wrangler.toml; npx wrangler secret put AXID_API_KEY; npx wrangler deploy; create the event subscription with the bot key (POST /api/v1/event-subscriptions {"url": "<worker url>"}, server at FEATURE_LEVEL=3); npx wrangler secret put AXID_SIGNING_SECRET with the secret it returns. See README.md.',
  vercel:
    'Write the files into a new folder, then: npm install; add AXID_API_KEY and AXID_BASE_URL as project environment variables; npx vercel deploy; create the event subscription with the bot key (POST /api/v1/event-subscriptions {"url": "<deployment>/api/events"}, server at FEATURE_LEVEL=3); add the secret it returns as AXID_SIGNING_SECRET and deploy again. See README.md.',
};

export const scaffoldTool = {
  name: 'scaffold_bot_project',
  config: {
    title: 'Generate a starter bot project',
    description:
      'Returns a complete, runnable starter project for an Axid bot as {files: {<path>: <contents>}} (write each file as given), plus next_steps. Works offline, no key needed. ' +
      'target_runtime "node": a dependency-free Node 20 bot that listens on the event stream and replies to mentions (in the thread when mentioned in a thread), reconnecting and catching up after gaps. ' +
      '"cloudflare-workers": a Worker (wrangler.toml) and "vercel": an api/events.ts function, each an event subscription endpoint: Axid POSTs the bot\'s events to it (server at FEATURE_LEVEL=3); it answers the URL challenge, checks the Axid-Signature (constant time, 5-minute tolerance) and answers mentions at once. ' +
      'Each project has a README with exact steps, including creating the subscription. Get the bot\'s key from setup_axid_bot.',
    inputSchema: {
      bot_name: z.string().trim().min(1).max(80).describe('The bot\'s name (as created with setup_axid_bot); used for the project and package names.'),
      target_runtime: z.enum(RUNTIMES).describe('Where the bot runs: "node", "cloudflare-workers" or "vercel".'),
    },
    outputSchema: {
      bot_name: z.string(),
      target_runtime: z.enum(RUNTIMES),
      files: z.record(z.string(), z.string()).describe('Map of file path (relative to the project folder) to file contents.'),
      next_steps: z.string(),
    },
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  run(args: { bot_name: string; target_runtime: Runtime }) {
    return {
      bot_name: args.bot_name,
      target_runtime: args.target_runtime,
      files: scaffold(args.bot_name, args.target_runtime),
      next_steps: NEXT_STEPS[args.target_runtime],
    };
  },
};
