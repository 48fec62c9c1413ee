import { z } from 'zod';
import { IssuedApiKeySchema } from '../../../shared/auth.js';
import { Timestamp, named } from '../../../shared/http/responses.js';
import { UserSchema } from '../users/users.presenter.js';
import { Name } from '../users/users.schemas.js';
import { UNSAFE_EMAIL, emailIdentity } from '../../../shared/identity.js';
import { Password } from './passwords.js';

/** An address this server can compare: it has an identity key (shared/identity.ts; 400 validation_error otherwise). */
const comparable = <T extends z.ZodString | z.ZodEmail>(schema: T) => schema.refine((s) => emailIdentity(s) !== undefined, UNSAFE_EMAIL);

/** An email address as people type it; compared by its identity key, so without regard to case (contract §12). */
export const Email = comparable(z.email().max(254));

/** Secrets handed to a browser in a URL fragment: 256-bit base64url. */
const Secret = z.string().min(1).max(200);

export const SignInBody = z.strictObject({ email: comparable(z.string().min(1).max(254)), password: z.string().min(1).max(256) });

export const AcceptInviteBody = z.strictObject({
  token: Secret,
  name: Name,
  display_name: z.string().max(80).nullable().optional(),
  email: Email,
  password: Password,
});

export const ExchangeBody = z.strictObject({ code: Secret });

export const ResetPasswordBody = z.strictObject({ code: Secret, password: Password });

/** `{user, api_key}`: every way in ends in an ordinary key (contract §12). */
export const SignedInSchema = named(
  'SignedIn',
  z.strictObject({ user: UserSchema, api_key: IssuedApiKeySchema.describe('A new 30-day key named `Web: <date>`; the secret is shown here only') }),
);

/** A one-time link: the code travels in the fragment, which no server log sees. */
export const OneTimeLinkSchema = named(
  'OneTimeLink',
  z.strictObject({ url: z.string().describe('Opens the web app, which takes the code once'), expires_at: Timestamp }),
);

export const SignInMethodsSchema = named(
  'SignInMethods',
  z.strictObject({ password: z.boolean(), oidc: z.strictObject({ name: z.string() }).nullable() }),
);
