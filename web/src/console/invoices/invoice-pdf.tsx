// An invoice's PDF for its business (GET /businesses/me/invoices/:id) or an admin (GET
// /admin/invoices/:id), fetched as a blob with the bearer header (the token is in memory, never in a
// link) and saved as invoice-<number>.pdf. The button of the invoice on its way is busy; the page
// shows the mutation's error.
import { useMutation, type UseMutationResult } from '@tanstack/react-query';
import { api, ok } from '../../shared/api/client';
import { saveBlob } from '../../shared/download';
import { BusyButton } from '../../shared/ui';

interface InvoiceRef {
  id: string;
  number: string;
}
export type InvoicePdf = UseMutationResult<void, Error, InvoiceRef>;

export function useInvoicePdf(reader: 'business' | 'admin'): InvoicePdf {
  return useMutation({
    mutationFn: async ({ id, number }: InvoiceRef) => {
      const params = { path: { id }, query: { format: 'pdf' as const } };
      const blob =
        reader === 'admin'
          ? await ok(api.GET('/api/admin/invoices/{id}', { params, parseAs: 'blob' }))
          : await ok(api.GET('/api/businesses/me/invoices/{id}', { params, parseAs: 'blob' }));
      saveBlob(blob as Blob, `invoice-${number}.pdf`);
    },
  });
}

/** "Download PDF"; `label` names the invoice where several buttons share a page (a row's). */
export function InvoicePdfButton({
  download,
  invoice,
  label,
  className,
}: {
  download: InvoicePdf;
  invoice: InvoiceRef;
  label?: string;
  className?: string;
}) {
  return (
    <BusyButton
      type="button"
      className={className}
      aria-label={label}
      busy={download.isPending && download.variables?.id === invoice.id}
      onClick={() => download.mutate(invoice)}
    >
      Download PDF
    </BusyButton>
  );
}
