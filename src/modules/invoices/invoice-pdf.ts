// An invoice as a PDF (contract section 21): pdfkit and the DejaVu Sans font, loaded on first use
// (they are heavy and most processes never draw an invoice). Text only, from the invoice's data: a
// name such as "=1+1" or "<b>" is drawn as those characters, nothing interprets it. The font is
// embedded (the glyphs used, with their Unicode mapping), so names and references in Latin with
// diacritics, Cyrillic or Greek print and copy as written (pdfkit's built-in Helvetica is Latin-1 only).
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { translator } from '../../i18n/i18n.js';
import type { Locale } from '../../shared/locales.js';
import { formatAmount } from '../../shared/money.js';
import type { InvoiceLine, InvoiceTotals } from './invoice-lines.js';

/** A line's words in the reader's language, from its kind (the stored description is English). */
function lineKey(line: InvoiceLine) {
  if (line.kind === 'DELIVERY' && line.jobType === 'RIDE') return 'invoice.line.RIDE' as const;
  // A payout that failed comes back: the ledger credits it (docs/money.md).
  if (line.kind === 'PAYOUT' && line.amount > 0) return 'invoice.line.PAYOUT_RETURNED' as const;
  if (line.kind === 'OTHER') return undefined;
  return `invoice.line.${line.kind}` as const;
}

export interface InvoiceDocument {
  number: string;
  month: string;
  issuedAt: string;
  currency: string;
  business: { id: string; name: string; address: string | null };
  openingBalance: number;
  closingBalance: number;
  amountDue: number;
  totals: InvoiceTotals;
  lines: InvoiceLine[];
}

type PdfKit = typeof import('pdfkit');

/** The npm package of the font (Bitstream Vera licence with public-domain changes: docs/money.md). */
const INVOICE_FONT_PACKAGE = 'dejavu-fonts-ttf';
const FONT_FILES = { regular: 'ttf/DejaVuSans.ttf', bold: 'ttf/DejaVuSans-Bold.ttf' } as const;
/** The names the fonts are registered under in each document. */
const REGULAR = 'InvoiceSans';
const BOLD = 'InvoiceSans-Bold';

interface PdfTools {
  PDFDocument: PdfKit;
  fonts: { regular: Buffer; bold: Buffer };
}
let tools: Promise<PdfTools> | undefined;
/** pdfkit and the font files, read once on the first invoice drawn (a failure is tried again next time). */
const loadTools = () =>
  (tools ??= (async () => {
    const require = createRequire(import.meta.url);
    const [m, regular, bold] = await Promise.all([
      import('pdfkit'),
      readFile(require.resolve(`${INVOICE_FONT_PACKAGE}/${FONT_FILES.regular}`)),
      readFile(require.resolve(`${INVOICE_FONT_PACKAGE}/${FONT_FILES.bold}`)),
    ]);
    return { PDFDocument: ((m as unknown as { default?: PdfKit }).default ?? m) as PdfKit, fonts: { regular, bold } };
  })().catch((err: unknown) => {
    tools = undefined;
    throw err;
  }));

/** Control characters (a tab, a line break) as spaces: every line of the invoice is one line of text. */
const printable = (text: string) => text.replace(/\p{Cc}/gu, ' ');

const dateOnly = (iso: string) => iso.slice(0, 10);

/** The invoice in the reader's language (contract section 27): its labels from the server's catalog. */
export async function renderInvoicePdf(invoice: InvoiceDocument, locale: Locale = 'en'): Promise<Buffer> {
  const { PDFDocument, fonts } = await loadTools();
  const t = translator(locale);
  const doc = new PDFDocument({
    size: 'A4',
    margin: 50,
    info: {
      Title: t('invoice.title', { number: invoice.number }),
      Author: 'Operator',
      CreationDate: new Date(invoice.issuedAt),
    },
  });
  doc.registerFont(REGULAR, fonts.regular).registerFont(BOLD, fonts.bold);
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
  const money = (amount: number) => formatAmount(amount, invoice.currency);
  const left = doc.page.margins.left;
  const width = doc.page.width - left - doc.page.margins.right;
  // Columns: date, description, reference, charge, credit (DejaVu Sans 9 pt: "2026-10-05" is 53 pt
  // wide, "Cash on delivery collected for you" 154 pt, "-1,234,567.89" 64 pt).
  const cols = [
    { x: left, w: 58 },
    { x: left + 62, w: 160 },
    { x: left + 227, w: 118 },
    { x: left + 350, w: 70 },
    { x: left + 425, w: width - 425 },
  ];
  const row = (cells: string[], options: { bold?: boolean } = {}) => {
    if (doc.y > doc.page.height - doc.page.margins.bottom - 30) doc.addPage();
    const y = doc.y;
    doc.font(options.bold ? BOLD : REGULAR).fontSize(9);
    let bottom = y;
    cells.forEach((cell, i) => {
      const col = cols[i]!;
      doc.text(printable(cell), col.x, y, { width: col.w, align: i >= 3 ? 'right' : 'left' });
      bottom = Math.max(bottom, doc.y);
    });
    doc.x = left;
    doc.y = bottom + 3;
  };
  const pair = (label: string, value: string, bold = false) => {
    const y = doc.y;
    doc.font(bold ? BOLD : REGULAR).fontSize(10);
    doc.text(label, left + 220, y, { width: 200 });
    doc.text(value, left + 350, y, { width: width - 350, align: 'right' });
    doc.x = left;
  };

  doc
    .font(BOLD)
    .fontSize(18)
    .text(t('invoice.title', { number: invoice.number }));
  doc.moveDown(0.5);
  doc.font(REGULAR).fontSize(10);
  doc.text(t('invoice.period', { month: invoice.month }));
  doc.text(t('invoice.issued', { date: dateOnly(invoice.issuedAt) }));
  doc.text(t('invoice.currency', { currency: invoice.currency }));
  doc.moveDown(0.5);
  doc.font(BOLD).text(t('invoice.billedTo'));
  doc.font(REGULAR).text(printable(invoice.business.name));
  if (invoice.business.address) doc.text(printable(invoice.business.address));
  doc.moveDown(1);

  const columns = ['date', 'description', 'reference', 'charge', 'credit'] as const;
  row(
    columns.map((c) => t(`invoice.column.${c}`)),
    { bold: true },
  );
  for (const line of invoice.lines) {
    row([
      dateOnly(line.date),
      ((key) => (key ? t(key) : line.description))(lineKey(line)),
      line.reference ?? '',
      line.amount < 0 ? money(-line.amount) : '',
      line.amount > 0 ? money(line.amount) : '',
    ]);
  }
  if (!invoice.lines.length) row(['', t('invoice.noActivity'), '', '', '']);
  doc.moveDown(1);

  const totals = invoice.totals;
  pair(t('invoice.total.opening'), money(invoice.openingBalance));
  pair(t('invoice.total.deliveries', { count: totals.deliveryCount }), money(totals.deliveries));
  if (totals.cancellationFees) pair(t('invoice.total.cancellationFees'), money(totals.cancellationFees));
  if (totals.tips) pair(t('invoice.total.tips'), money(totals.tips));
  if (totals.cashOnDelivery) pair(t('invoice.total.cashOnDelivery'), money(totals.cashOnDelivery));
  if (totals.payments) pair(t('invoice.total.payments'), money(totals.payments));
  if (totals.payouts) pair(t('invoice.total.payouts'), money(totals.payouts));
  if (totals.other) pair(t('invoice.total.other'), money(totals.other));
  pair(t('invoice.total.net'), money(totals.net), true);
  pair(t('invoice.total.closing'), money(invoice.closingBalance), true);
  pair(t('invoice.total.amountDue'), money(invoice.amountDue), true);
  doc.moveDown(1);
  doc.font(REGULAR).fontSize(8).text(t('invoice.footnote'), left, doc.y, { width });
  doc.end();
  return done;
}
