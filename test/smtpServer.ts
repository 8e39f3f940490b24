import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  /** The envelope's recipients, as the server was asked to deliver. */
  to: string[];
  from: string;
  mail: ParsedMail;
}

/** What the server answers a message to these recipients, the n-th it got (0-based): accept it, or an SMTP error code. */
export type SmtpResponder = (to: string[], n: number) => 'accept' | number;

/** A real SMTP server on 127.0.0.1 (plain, no authentication) that records every message. */
export class TestSmtp {
  readonly received: ReceivedMail[] = [];
  respond: SmtpResponder = () => 'accept';
  /** Recipients the server refuses (550) while it accepts the others of a message. */
  readonly unknownMailboxes = new Set<string>();
  private messages = 0;

  private constructor(
    private readonly server: SMTPServer,
    readonly url: string,
  ) {}

  static async start(): Promise<TestSmtp> {
    let smtp: TestSmtp | undefined;
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      onRcptTo(address, _session, callback) {
        if (!smtp!.unknownMailboxes.has(address.address)) return callback();
        callback(Object.assign(new Error(`no mailbox ${address.address}`), { responseCode: 550 }));
      },
      onData(stream, session, callback) {
        const to = session.envelope.rcptTo.map((a) => a.address);
        const answer = smtp!.respond(to, smtp!.messages++);
        simpleParser(stream).then(
          (mail) => {
            if (answer !== 'accept') return callback(Object.assign(new Error(`refused by the test server (${answer})`), { responseCode: answer }));
            const { mailFrom } = session.envelope;
            smtp!.received.push({ to, from: mailFrom ? mailFrom.address : '', mail });
            callback();
          },
          (err: Error) => callback(err),
        );
      },
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.server.address() as AddressInfo;
    smtp = new TestSmtp(server, `smtp://127.0.0.1:${port}`);
    return smtp;
  }

  /** Waits until at least `count` messages have arrived. */
  async waitFor(count: number, timeoutMs = 5000): Promise<ReceivedMail[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.received.length < count) {
      if (Date.now() > deadline) throw new Error(`expected ${count} e-mails, got ${this.received.length}`);
      await new Promise((r) => setTimeout(r, 10));
    }
    return this.received;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
