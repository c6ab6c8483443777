import nodemailer from 'nodemailer';

export interface SmtpSettings {
  host: string;
  port: number;
  /** implicit: TLS from the first byte (465); starttls: must upgrade; opportunistic: upgrade when offered; off: never. */
  tls: 'implicit' | 'starttls' | 'opportunistic' | 'off';
  user?: string;
  password?: string;
  from: string;
}

/** One email to one address, as emailMessage renders it. */
export interface Email {
  to: string;
  subject: string;
  text: string;
  html: string;
}

export interface EmailSender {
  /** Rejects with nodemailer's error (its `responseCode` is the SMTP reply's, when there was one). */
  send(email: Email): Promise<void>;
  close(): void;
}

/** Email over the operator's SMTP server, through nodemailer. */
export function createEmailSender(smtp: SmtpSettings, timeoutMs: number): EmailSender {
  const transport = nodemailer.createTransport({
    host: smtp.host,
    port: smtp.port,
    secure: smtp.tls === 'implicit',
    requireTLS: smtp.tls === 'starttls',
    ignoreTLS: smtp.tls === 'off',
    auth: smtp.user ? { user: smtp.user, pass: smtp.password ?? '' } : undefined,
    connectionTimeout: timeoutMs,
    socketTimeout: timeoutMs,
  });
  return {
    async send(email) {
      await transport.sendMail({ from: smtp.from, ...email });
    },
    close: () => transport.close(),
  };
}
