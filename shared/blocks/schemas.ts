// Props schemas of the 11 stable blocks (docs/decisions.md, "Block URLs") and the URL rule every
// URL in a document follows. Pure: no I/O, no config; card hosts are checked in
// validate.ts because they come from the caller's rules.
import { z } from 'zod';

export const BLOCK_NAMES = [
  'text',
  'heading',
  'quote',
  'divider',
  'image',
  'link_unfurl',
  'callout',
  'alert_banner',
  'button_group',
  'tracker_issue_card',
  'repo_pr_card',
] as const;

/**
 * Blocks agents use to ask their readers (contract §15, feature level 3):
 * available where the caller's rules say so (`agentBlocks`). Their answers
 * are kept by the service, which writes what readers need into the stored
 * props (`counts`, `decision`); a posted document cannot set those.
 */
export const AGENT_BLOCK_NAMES = ['feedback_buttons', 'approval_request'] as const;

export type AgentBlockName = (typeof AGENT_BLOCK_NAMES)[number];
export type BlockName = (typeof BLOCK_NAMES)[number] | AgentBlockName;

export function isBlockName(name: string): name is BlockName {
  return (BLOCK_NAMES as readonly string[]).includes(name) || isAgentBlock(name);
}

export function isAgentBlock(name: string): name is AgentBlockName {
  return (AGENT_BLOCK_NAMES as readonly string[]).includes(name);
}

/** The block names a caller may use: the stable ones, and the agent blocks where available. */
export const blockNamesFor = (agentBlocks: boolean | undefined): readonly string[] => (agentBlocks ? [...BLOCK_NAMES, ...AGENT_BLOCK_NAMES] : BLOCK_NAMES);

/** The blocks whose URL must be on a host of a given kind; used for card_origin too. */
export const CARD_BLOCKS = {
  tracker_issue_card: 'trackerHosts',
  repo_pr_card: 'codeHosts',
} as const satisfies Partial<Record<BlockName, string>>;

export type CardBlockName = keyof typeof CARD_BLOCKS;

export function isCardBlock(name: BlockName): name is CardBlockName {
  return name in CARD_BLOCKS;
}

// Maximum lengths, in characters as JavaScript counts them (UTF-16 code units).
// The button limits (label, actionId, url) are documented; the others were
// chosen here: the whole document is capped at 64 KB anyway, these only keep a
// single field from eating the budget or breaking the layout.
export const MAX_LENGTH = {
  text: 4000, // body text of text, quote, callout, alert_banner
  title: 300, // headings, card and unfurl titles
  description: 1000, // link_unfurl description
  alt: 1000, // image alt text
  status: 50, // tracker_issue_card status, repo_pr_card state
  emoji: 32, // one emoji, including ZWJ sequences and skin tones
  label: 100, // button label, alert_banner actionLabel (documented for buttons)
  actionId: 100, // documented
  url: 2048, // documented for button urls; applied to every URL
} as const;

export const BUTTON_STYLES = ['primary', 'secondary', 'danger'] as const;
export const ALERT_VARIANTS = ['info', 'success', 'warning', 'error'] as const;

/**
 * Characters no URL in a document may hold, even where the WHATWG parser would
 * accept or silently drop them: spaces and controls (other parsers, in mobile
 * clients or link previews, do not drop tabs/newlines and could see another
 * host than we checked), backslashes (treated as `/`), and invisible or
 * direction-changing format characters (U+200B-U+200F, U+202A-U+202E,
 * U+2066-U+2069, U+FEFF, ...) that make a URL read differently than it goes.
 */
const URL_FORBIDDEN = /[\p{Cc}\p{Cf}\p{Z}\\]/u;

/**
 * Why `value` is not an acceptable URL, or null when it is. Every URL in a
 * document must be an absolute https:// URL the WHATWG parser accepts, with no
 * user info (`https://github.com@evil.example/` goes to evil.example). What is
 * stored is the parsed URL serialised (`new URL(value).href`, see
 * validate.ts), so a percent-encoded or full-width host is stored as the host
 * it resolves to.
 */
export function httpsUrlProblem(value: string): string | null {
  // Checked on the text as written, so `HTTPS://` or ` https://` are refused too.
  if (!value.startsWith('https://')) return 'must start with https://';
  if (URL_FORBIDDEN.test(value)) {
    return 'must not contain spaces, control characters, invisible or bidirectional formatting characters or backslashes';
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'is not a valid URL';
  }
  if (url.protocol !== 'https:') return 'must start with https://';
  if (url.username !== '' || url.password !== '') return 'must not contain user info (user@)';
  return null;
}

// ---- field builders -------------------------------------------------------

/** Error text for a missing field versus a field of the wrong type. */
const typeError = (expected: string) => (issue: { input: unknown }) =>
  issue.input === undefined ? 'is required' : `must be ${expected}`;

/** A string of `min`..`max` characters. */
function text(max: number, min = 1) {
  let schema = z.string({ error: typeError('a string') });
  if (min > 0) schema = schema.min(min, min === 1 ? 'must not be empty' : `must be at least ${min} characters`);
  return schema.max(max, `must be at most ${max} characters`);
}

/** An https:// URL (see httpsUrlProblem), parsed as the serialised URL. */
function httpsUrl() {
  return text(MAX_LENGTH.url)
    .superRefine((value, ctx) => {
      const problem = httpsUrlProblem(value);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    })
    .transform((value) => new URL(value).href);
}

// ---- buttons --------------------------------------------------------------

const buttonSchema = z
  .strictObject({
    label: text(MAX_LENGTH.label),
    url: httpsUrl().optional(),
    actionId: text(MAX_LENGTH.actionId).optional(),
    style: z
      .enum(BUTTON_STYLES, { error: `must be one of: ${BUTTON_STYLES.join(', ')}` })
      .optional(),
  }, { error: typeError('an object') })
  .superRefine((button, ctx) => {
    const hasUrl = button.url !== undefined;
    const hasActionId = button.actionId !== undefined;
    if (hasUrl && hasActionId) {
      ctx.addIssue({ code: 'custom', message: 'must have exactly one of url or actionId, not both' });
    } else if (!hasUrl && !hasActionId) {
      ctx.addIssue({ code: 'custom', message: 'must have exactly one of url or actionId' });
    }
  });

// ---- agent blocks ---------------------------------------------------------

/** Any UUID in 8-4-4-4-12 hex form; the version digit is not checked. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** How far ahead an approval request may expire: 30 days. */
export const MAX_APPROVAL_WINDOW_MS = 30 * 24 * 3600 * 1000;

const approvalRequestSchema = z
  .strictObject({
    title: text(MAX_LENGTH.title),
    description: text(MAX_LENGTH.description, 0).optional(),
    approve_label: text(MAX_LENGTH.label).optional(),
    deny_label: text(MAX_LENGTH.label).optional(),
    expires_at: z.iso.datetime({ offset: true, error: 'must be an ISO 8601 date-time (2026-01-31T12:00:00Z)' }),
    approver_ids: z
      .array(z.string({ error: typeError('a user id (UUID)') }).regex(UUID, 'must be a user id (UUID)'), { error: typeError('an array of user ids') })
      .min(1, 'must name at least 1 approver (leave it out to let every reader answer)')
      .max(50, 'must name at most 50 approvers')
      .optional(),
  }, { error: typeError('an object') })
  .superRefine((request, ctx) => {
    // Checked when written: a request already expired, or open for months, is a mistake.
    const at = Date.parse(request.expires_at);
    if (at <= Date.now()) ctx.addIssue({ code: 'custom', path: ['expires_at'], message: 'must be in the future' });
    else if (at > Date.now() + MAX_APPROVAL_WINDOW_MS) ctx.addIssue({ code: 'custom', path: ['expires_at'], message: 'must be at most 30 days ahead' });
  });

// ---- block props ----------------------------------------------------------

/** Props objects are strict: a key not listed is rejected. */
const props = <T extends z.core.$ZodLooseShape>(shape: T) =>
  z.strictObject(shape, { error: typeError('an object') });

export const PROPS_SCHEMAS = {
  text: props({ text: text(MAX_LENGTH.text) }),
  heading: props({
    text: text(MAX_LENGTH.title),
    level: z
      .number({ error: typeError('an integer from 1 to 3') })
      .int('must be an integer from 1 to 3')
      .min(1, 'must be an integer from 1 to 3')
      .max(3, 'must be an integer from 1 to 3'),
  }),
  quote: props({ text: text(MAX_LENGTH.text) }),
  divider: props({}),
  image: props({ url: httpsUrl(), alt: text(MAX_LENGTH.alt, 0).optional() }),
  link_unfurl: props({
    url: httpsUrl(),
    title: text(MAX_LENGTH.title, 0).optional(),
    description: text(MAX_LENGTH.description, 0).optional(),
  }),
  callout: props({ text: text(MAX_LENGTH.text), emoji: text(MAX_LENGTH.emoji).optional() }),
  alert_banner: props({
    variant: z.enum(ALERT_VARIANTS, { error: `must be one of: ${ALERT_VARIANTS.join(', ')}` }),
    text: text(MAX_LENGTH.text),
    actionLabel: text(MAX_LENGTH.label).optional(),
    actionUrl: httpsUrl().optional(),
  }).superRefine((banner, ctx) => {
    // The action is a link: a label without a target (or the reverse) is useless.
    if (banner.actionLabel !== undefined && banner.actionUrl === undefined) {
      ctx.addIssue({ code: 'custom', path: ['actionUrl'], message: 'is required when actionLabel is set' });
    } else if (banner.actionUrl !== undefined && banner.actionLabel === undefined) {
      ctx.addIssue({ code: 'custom', path: ['actionLabel'], message: 'is required when actionUrl is set' });
    }
  }),
  button_group: props({
    buttons: z
      .array(buttonSchema, { error: typeError('an array of buttons') })
      .min(1, 'must have at least 1 button')
      .max(10, 'must have at most 10 buttons'),
  }),
  tracker_issue_card: props({
    url: httpsUrl(),
    title: text(MAX_LENGTH.title, 0).optional(),
    status: text(MAX_LENGTH.status, 0).optional(),
  }),
  repo_pr_card: props({
    url: httpsUrl(),
    title: text(MAX_LENGTH.title, 0).optional(),
    state: text(MAX_LENGTH.status, 0).optional(),
  }),
  feedback_buttons: z.strictObject({}, { error: typeError('an object') }),
  approval_request: approvalRequestSchema,
} satisfies Record<BlockName, z.ZodType>;

/** Props of each block, written for people and AI agents reading a hint. */
export const PROPS_SHAPES: Record<BlockName, string> = {
  text: '{text}',
  heading: '{text, level: 1|2|3}',
  quote: '{text}',
  divider: '{}',
  image: '{url: https URL, alt?}',
  link_unfurl: '{url: https URL, title?, description?}',
  callout: '{text, emoji?}',
  alert_banner: `{variant: ${ALERT_VARIANTS.join('|')}, text, actionLabel?, actionUrl?: https URL} (actionLabel and actionUrl together or neither)`,
  button_group: '{buttons: 1 to 10 buttons}',
  tracker_issue_card: '{url: https URL on a tracker host, title?, status?}',
  repo_pr_card: '{url: https URL on a code host, title?, state?}',
  feedback_buttons: '{} (readers mark the message positive or negative: POST /interactions/feedback)',
  approval_request:
    '{title, description?, approve_label?, deny_label?, expires_at: ISO date-time within 30 days, approver_ids?: user ids} (answered once: POST /interactions/approvals)',
};

export const BUTTON_SHAPE =
  `{label: 1-${MAX_LENGTH.label} characters, exactly one of url (https://, at most ${MAX_LENGTH.url} characters) ` +
  `or actionId (1-${MAX_LENGTH.actionId} characters), style?: ${BUTTON_STYLES.join('|')}}`;

// ---- inline nodes ---------------------------------------------------------

/** `{"type":"mention","attrs":{"id":"<user id>","label"?:"<display name>"}}` */
export const MENTION_ATTRS_SCHEMA = z.strictObject({
  id: z.string({ error: typeError('a user id (UUID)') }).regex(UUID, 'must be a user id (UUID)'),
  // Editors (tiptap) write `label: null` when they have no display name.
  label: text(200, 0).nullable().optional(),
}, { error: typeError('an object {id, label?}') });
