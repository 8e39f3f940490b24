import type { Config } from '../config.js';
import { renderInvoicePdf } from '../documents/invoicePdf.js';
import { invoiceDocument, type InvoiceDocumentSource } from '../domain/invoiceDocument.js';
import { getOrganisation } from '../domain/organisation.js';
import type { Logger } from '../logger.js';
import type { EmailOutcome, OutgoingEmail } from '../store/ports/emails.js';
import type { Store } from '../store/store.js';

export const NO_SMTP = 'no SMTP configured (BILLING_SMTP_URL)';

/** E-mails claimed per unit of work. */
const BATCH = 20;
/** A claimed e-mail is leased this long: a crash while sending frees it for another attempt after. */
const LEASE_MS = 5 * 60_000;

export interface EmailRun {
  sent: number;
  retrying: number;
  failed: number;
  notSent: number;
}

/** Why an attempt failed, and whether retrying can help (an SMTP 5xx answer is final). */
export interface SendFailure {
  error: string;
  permanent: boolean;
}

/**
 * The state after an attempt (`attempts` counts it): sent; failed at once on a permanent failure or
 * after the last retry; else queued again after the delay of this retry.
 */
export function emailOutcome(failure: SendFailure | null, attempts: number, at: Date, delaysSeconds: readonly number[]): EmailOutcome {
  if (!failure) return { status: 'sent', lastError: null, nextAttemptAt: null, sentAt: at.toISOString() };
  const delay = delaysSeconds[attempts - 1];
  if (failure.permanent || delay === undefined) return { status: 'failed', lastError: failure.error, nextAttemptAt: null, sentAt: null };
  return { status: 'queued', lastError: failure.error, nextAttemptAt: new Date(at.getTime() + delay * 1000).toISOString(), sentAt: null };
}

function failureOf(err: unknown): SendFailure {
  const e = err as { code?: string; responseCode?: number; message?: string };
  const permanent = typeof e.responseCode === 'number' && e.responseCode >= 500 && e.responseCode < 600;
  return { error: [e.code, e.message].filter(Boolean).join(' ') || String(err), permanent };
}

/**
 * A pool of up to 4 SMTP connections; a server that does not answer fails the attempt within seconds.
 * nodemailer is loaded on first use, so processes that send no e-mail (keys, stdio) start without it.
 */
async function smtpPool(url: string) {
  const { createTransport } = await import('nodemailer');
  return createTransport({ pool: true, url, maxConnections: 4, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 });
}

type SmtpPool = Awaited<ReturnType<typeof smtpPool>>;

interface Claimed {
  email: OutgoingEmail;
  from: string;
  replyTo: string | undefined;
  documents: Array<{ filename: string; source: InvoiceDocumentSource }>;
}

/**
 * Sends the outbox over SMTP (nodemailer, a pool of connections to BILLING_SMTP_URL), never inside
 * a unit of work: a short unit claims (leases) a batch of due e-mails and reads what their PDFs
 * need, the PDFs are rendered and the messages sent outside it, and each outcome is recorded in a
 * unit of its own. Without BILLING_SMTP_URL, due e-mails become not_sent. Called by the jobs run.
 */
export class EmailSender {
  private pool: Promise<SmtpPool> | undefined;

  constructor(private readonly deps: { store: Store; config: Config; logger: Logger }) {}

  /** Attempts every e-mail due at `now` once. */
  async runDue(now: Date): Promise<EmailRun> {
    const run: EmailRun = { sent: 0, retrying: 0, failed: 0, notSent: 0 };
    const at = now.toISOString();
    const { smtpUrl } = this.deps.config;
    if (!smtpUrl) {
      run.notSent = await this.deps.store.transaction((tx) => tx.emails.markDueNotSent(at, NO_SMTP, at));
      return run;
    }
    const seen: string[] = [];
    for (;;) {
      const batch = await this.claim(now, seen);
      if (batch.length === 0) break;
      seen.push(...batch.map((c) => c.email.id));
      this.pool ??= smtpPool(smtpUrl);
      const pool = await this.pool;
      await Promise.all(batch.map((c) => this.send(pool, c, now, run)));
    }
    return run;
  }

  /** Closes the SMTP connections; a later run opens new ones. */
  close(): void {
    const pool = this.pool;
    this.pool = undefined;
    void pool?.then((p) => p.close());
  }

  private claim(now: Date, seen: readonly string[]): Promise<Claimed[]> {
    const from = this.deps.config.emailFrom as string;
    return this.deps.store.transaction(async (tx) => {
      const emails = await tx.emails.claimDue(now.toISOString(), new Date(now.getTime() + LEASE_MS).toISOString(), seen, BATCH);
      const claimed: Claimed[] = [];
      for (const email of emails) {
        const org = await getOrganisation(tx, email.organisationId);
        const documents = [];
        for (const a of email.attachments) documents.push({ filename: a.filename, source: await invoiceDocument(tx, email.organisationId, a.invoice) });
        claimed.push({ email, from: from.includes('<') ? from : `"${org.name.replace(/["\\]/g, '')}" <${from}>`, replyTo: org.email ?? undefined, documents });
      }
      return claimed;
    });
  }

  private async send(pool: SmtpPool, claimed: Claimed, now: Date, run: EmailRun): Promise<void> {
    const { email } = claimed;
    let failure: SendFailure | null = null;
    let rejected: string[] = [];
    try {
      const attachments = [];
      for (const d of claimed.documents) attachments.push({ filename: d.filename, content: await renderInvoicePdf(d.source), contentType: 'application/pdf' });
      const info = await pool.sendMail({
        from: claimed.from,
        replyTo: claimed.replyTo,
        // nodemailer's address objects: it quotes or encodes the names, whatever characters they have.
        to: email.to.map((r) => (r.name === null ? r.address : { name: r.name, address: r.address })),
        subject: email.subject,
        text: email.text,
        ...(email.html === null ? {} : { html: email.html }),
        attachments,
      });
      rejected = info.rejected;
    } catch (err) {
      failure = failureOf(err);
    }
    const outcome = emailOutcome(failure, email.attempts + 1, now, this.deps.config.emailRetryDelaysSeconds);
    if (outcome.status === 'sent' && rejected.length > 0) outcome.lastError = `the server refused ${rejected.join(', ')}; sent to the others`;
    try {
      await this.deps.store.transaction((tx) => tx.emails.recordAttempt(email.organisationId, email.id, outcome, now.toISOString()));
    } catch (err) {
      this.deps.logger.error({ err, email: email.id }, 'e-mail attempt not recorded; it is attempted again when its lease ends');
      return;
    }
    run[outcome.status === 'queued' ? 'retrying' : outcome.status === 'sent' ? 'sent' : 'failed'] += 1;
    if (failure) this.deps.logger.info({ email: email.id, error: failure.error, next: outcome.status }, 'e-mail attempt failed');
  }
}
