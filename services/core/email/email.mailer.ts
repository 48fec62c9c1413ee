// Sending mail (contract §14): nodemailer over SMTP_URL, from MAIL_FROM. Without
// both, nothing is sent, nothing fails, and nodemailer is never loaded (a
// dynamic import on the first mail). Every send has deadlines (connecting,
// greeting, the whole exchange), so a hung server never holds a caller.
import type { Transporter } from 'nodemailer';
import type { Runtime } from '../../../shared/runtime.js';
import type { LevelSpan } from '../../../shared/feature-level.js';

/** Mail is a feature of level 3 (contract §14): level 2 sends none, whatever is set. */
export const EMAIL: LevelSpan = { since: 3 };

export interface Mail {
  to: string;
  subject: string;
  text: string;
  html: string;
  headers?: Record<string, string>;
}

const TIMEOUT_MS = 10_000;
const transports = new WeakMap<Runtime, Promise<Transporter>>();

function transportOf(rt: Runtime, smtpUrl: string): Promise<Transporter> {
  let transport = transports.get(rt);
  if (!transport) {
    transport = import('nodemailer').then((nodemailer) =>
      nodemailer.createTransport({ url: smtpUrl, connectionTimeout: TIMEOUT_MS, greetingTimeout: TIMEOUT_MS, socketTimeout: TIMEOUT_MS } as Parameters<typeof nodemailer.createTransport>[0]),
    );
    transports.set(rt, transport);
  }
  return transport;
}

/** Whether mail is sent at all (SMTP_URL and MAIL_FROM set). */
export const mailConfigured = (rt: Runtime) => rt.config.email !== null;

/** Sends one mail; resolves false when mail is not configured. Throws when the server refuses or does not answer. */
export async function sendMail(rt: Runtime, mail: Mail): Promise<boolean> {
  const email = rt.config.email;
  if (!email) return false;
  const transport = await transportOf(rt, email.smtpUrl);
  await transport.sendMail({ from: email.from, to: mail.to, subject: mail.subject, text: mail.text, html: mail.html, headers: mail.headers });
  return true;
}

/**
 * Sends a mail after the request that made it answered (an invite, a reset
 * link: shown in the answer too), so a slow or absent server neither delays
 * nor fails it; a failure is logged without the mail's content.
 */
export function sendMailSoon(rt: Runtime, mail: Mail, what: string): void {
  if (!rt.config.email || !rt.presenters.email) return;
  void sendMail(rt, mail).catch((err: Error & { code?: string }) => rt.log.warn({ what, err: err.code ?? 'send failed' }, 'email not sent'));
}

/** Closes this runtime's SMTP transport, if one was opened. */
export async function closeMailer(rt: Runtime): Promise<void> {
  const transport = transports.get(rt);
  transports.delete(rt);
  if (transport) (await transport).close();
}
