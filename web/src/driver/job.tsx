// The current job, step by step (contract section 19): packages Picked up → Start delivery →
// Delivered (with the delivery code, and the proof of delivery uploaded first: proof.tsx) or Failed (a reason code, optional text: fail-reason.tsx); rides Arrived → Start trip → Complete
// trip. "Navigate" opens the phone's maps at the next point; the contact of that point can be called
// or texted while the job is active. Every answer of the server replaces the job shown.
import { useMutation } from '@tanstack/react-query';
import { useCallback, useRef, useState } from 'react';
import { api, ok } from '../shared/api/client';
import { BusyButton, ErrorBox, Field, formatMoney, StatusBadge } from '../shared/ui';
import { CashToCollect, cashCollectedBody } from './cash';
import { newKey, performStep, useQueuedSteps } from './offline-queue';
import type { Job, Package, Ride } from './types';
import { formatPoint, mapLinks } from './ui';
import { FailReasonChoice, type FailReasonCode } from './fail-reason';
import { ProofCapture, uploadProof, type ProofCaptureHandle, type ProofDraft } from './proof';

const ACTIVE_PACKAGE = ['ASSIGNED', 'PICKED_UP', 'IN_TRANSIT'];
const ACTIVE_RIDE = ['ACCEPTED', 'ARRIVED', 'IN_PROGRESS'];

export function isActive(job: Job): boolean {
  return (job.jobType === 'PACKAGE' ? ACTIVE_PACKAGE : ACTIVE_RIDE).includes(job.job.status);
}

/** Where the driver goes next, and whom to call there (a ride's customer has no phone in the API). */
function nextPoint(job: Job): {
  label: string;
  location: { lat: number; lng: number };
  address?: string;
  contact?: { name: string; phone: string };
  notes?: string;
} {
  if (job.jobType === 'PACKAGE') {
    const p = job.job;
    const stop = p.status === 'ASSIGNED' ? p.pickup : p.dropoff;
    return {
      label: p.status === 'ASSIGNED' ? 'Pickup' : 'Drop-off',
      location: stop.location,
      address: stop.address,
      contact:
        stop.contactName !== undefined && stop.contactPhone !== undefined
          ? { name: stop.contactName, phone: stop.contactPhone }
          : undefined,
      notes: stop.notes,
    };
  }
  const r = job.job;
  return r.status === 'ACCEPTED'
    ? { label: 'Pickup', location: r.pickupLocation }
    : { label: 'Destination', location: r.destinationLocation };
}

export function JobView({ job, readOnly, onChanged }: { job: Job; readOnly?: boolean; onChanged: (job: Job) => void }) {
  const active = isActive(job);
  const next = active ? nextPoint(job) : undefined;
  const links = next ? mapLinks(next.location) : undefined;
  const price = job.job.price;
  return (
    <section className="card job" aria-labelledby="job-title">
      <h2 id="job-title">
        {job.jobType === 'PACKAGE' ? 'Delivery' : 'Ride'} <StatusBadge status={job.job.status} />
      </h2>
      {job.jobType === 'PACKAGE' && job.job.reference && <p className="muted">Reference {job.job.reference}</p>}
      {next && (
        <div className="next">
          <h3>{next.label}</h3>
          <p className="address">{next.address ?? formatPoint(next.location)}</p>
          {next.notes && <p className="notes">{next.notes}</p>}
          {next.contact && (
            <p>
              {next.contact.name} · <span className="mono">{next.contact.phone}</span>
            </p>
          )}
          <div className="buttons">
            <a className="button big" href={links!.navigate}>
              Navigate
            </a>
            {/* A call or an SMS needs no data connection: offered offline too, on the job as last seen. */}
            {next.contact && (
              <>
                <a className="button big secondary" href={`tel:${next.contact.phone}`}>
                  Call
                </a>
                <a className="button big secondary" href={`sms:${next.contact.phone}`}>
                  Text
                </a>
              </>
            )}
          </div>
          <p>
            <a href={links!.web} target="_blank" rel="noopener noreferrer">
              Open in Google Maps
            </a>
          </p>
        </div>
      )}
      {job.jobType === 'PACKAGE' && (
        <p>
          Parcel: {job.job.parcel.description}
          {job.job.parcel.size ? ` (${job.job.parcel.size.toLowerCase()})` : ''}
        </p>
      )}
      {price && <p>Price: {formatMoney(price.amount, price.currency)}</p>}
      <QueuedSteps jobId={job.job.id} />
      {active &&
        !readOnly &&
        (job.jobType === 'PACKAGE' ? (
          <PackageSteps pkg={job.job} onChanged={onChanged} />
        ) : (
          <RideSteps ride={job.job} onChanged={onChanged} />
        ))}
      {!readOnly && (job.jobType === 'PACKAGE' ? job.job.status === 'ASSIGNED' : job.job.status === 'ACCEPTED') && (
        <ReleaseJob job={job} onChanged={onChanged} />
      )}
    </section>
  );
}

/**
 * Handing the job back before pickup (contract section 13): a package from ASSIGNED, a ride from
 * ACCEPTED, with a reason, after a confirmation. Not queued offline: the job goes back to dispatch
 * only when the server says so (an error is shown instead).
 */
function ReleaseJob({ job, onChanged }: { job: Job; onChanged: (job: Job) => void }) {
  const [open, setOpen] = useState(false);
  const [reason, setReason] = useState('');
  const [key] = useState(newKey);
  const release = useMutation({
    mutationFn: async (): Promise<Job> => {
      const options = {
        params: { path: { id: job.job.id } },
        body: { reason: reason.trim() },
        headers: { 'Idempotency-Key': key },
      };
      return job.jobType === 'PACKAGE'
        ? { jobType: 'PACKAGE', job: await ok(api.POST('/api/packages/{id}/release', options)) }
        : { jobType: 'RIDE', job: await ok(api.POST('/api/rides/{id}/release', options)) };
    },
    onSuccess: (released) => onChanged(released),
  });
  if (!open) {
    return (
      <button type="button" className="big secondary danger-text" onClick={() => setOpen(true)}>
        Release job
      </button>
    );
  }
  return (
    <form
      className="steps"
      aria-label="Release job"
      onSubmit={(e) => {
        e.preventDefault();
        release.mutate();
      }}
    >
      <p>The job goes back to dispatch for another driver and is never offered to you again.</p>
      <Field
        label="Reason for releasing"
        required
        maxLength={500}
        value={reason}
        onChange={(e) => setReason(e.target.value)}
        hint="Why you cannot do this job"
      />
      <ErrorBox error={release.error} />
      <BusyButton type="submit" className="big danger" busy={release.isPending}>
        Confirm release
      </BusyButton>
      <button type="button" className="big secondary" onClick={() => setOpen(false)}>
        Back
      </button>
    </form>
  );
}

function PackageSteps({ pkg, onChanged }: { pkg: Package; onChanged: (job: Job) => void }) {
  const [failing, setFailing] = useState(false);
  const [reason, setReason] = useState('');
  const [reasonCode, setReasonCode] = useState<FailReasonCode | undefined>(undefined);
  const [deliveryCode, setDeliveryCode] = useState('');
  const [recipientName, setRecipientName] = useState('');
  const [cashCollected, setCashCollected] = useState('');
  const [proof, setProof] = useState<ProofDraft>({ photo: undefined, signed: false });
  const onProof = useCallback((draft: ProofDraft) => setProof(draft), []);
  const proofPad = useRef<ProofCaptureHandle | undefined>(undefined);
  // Sent at once, or queued while the phone is offline (offline-queue.ts): the mutation runs offline too.
  // The proof's images are uploaded first and need the network (they are not queued).
  const step = useMutation({
    networkMode: 'always',
    mutationFn: async (action: 'pickup' | 'start' | 'deliver' | 'fail') => {
      const job: Job = { jobType: 'PACKAGE', job: pkg };
      switch (action) {
        case 'pickup':
          return performStep(job, { action, expect: 'PICKED_UP', label: 'Picked up' });
        case 'start':
          return performStep(job, { action, expect: 'IN_TRANSIT', label: 'Start delivery' });
        case 'deliver': {
          // The proof goes first (the server refuses a delivery without the proof it requires).
          const signature = await proofPad.current?.signature();
          const name = recipientName.trim();
          if (proof.photo || signature)
            await uploadProof(pkg.id, { photo: proof.photo, signature, recipientName: name || undefined });
          return performStep(job, {
            action,
            expect: 'DELIVERED',
            label: 'Delivered',
            body: {
              ...(deliveryCode ? { deliveryCode } : {}),
              ...(name ? { recipientName: name } : {}),
              ...cashCollectedBody(pkg, cashCollected),
            },
          });
        }
        case 'fail':
          return performStep(job, {
            action,
            expect: 'FAILED',
            label: 'Failed',
            body: { reasonCode: reasonCode ?? 'OTHER', ...(reason.trim() ? { reason: reason.trim() } : {}) },
          });
      }
    },
    onSuccess: (job) => onChanged(job),
  });

  if (failing) {
    return (
      <form
        className="steps"
        onSubmit={(e) => {
          e.preventDefault();
          step.mutate('fail');
        }}
      >
        <FailReasonChoice value={reasonCode} onChange={setReasonCode} />
        <Field
          label="Details"
          maxLength={500}
          value={reason}
          onChange={(e) => setReason(e.target.value)}
          hint="Optional: what happened, for the sender"
        />
        <ErrorBox error={step.error} />
        <BusyButton type="submit" className="big danger" busy={step.isPending}>
          Report failure
        </BusyButton>
        <button type="button" className="big secondary" onClick={() => setFailing(false)}>
          Back
        </button>
      </form>
    );
  }
  return (
    <div className="steps">
      {pkg.status === 'ASSIGNED' && (
        <BusyButton type="button" className="big" busy={step.isPending} onClick={() => step.mutate('pickup')}>
          Picked up
        </BusyButton>
      )}
      {pkg.status === 'PICKED_UP' && (
        <BusyButton type="button" className="big" busy={step.isPending} onClick={() => step.mutate('start')}>
          Start delivery
        </BusyButton>
      )}
      {pkg.status === 'IN_TRANSIT' && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            step.mutate('deliver');
          }}
        >
          <Field
            label="Delivery code"
            inputMode="numeric"
            pattern="[0-9]{4}"
            maxLength={4}
            autoComplete="off"
            value={deliveryCode}
            onChange={(e) => setDeliveryCode(e.target.value.trim())}
            hint="The recipient’s 4 digits, when the sender set one"
          />
          <ProofCapture required={pkg.proofRequired} onChange={onProof} handleRef={proofPad} />
          <Field
            label="Recipient name"
            maxLength={100}
            autoComplete="off"
            value={recipientName}
            onChange={(e) => setRecipientName(e.target.value)}
            hint="Optional; sent with the proof"
          />
          <CashToCollect pkg={pkg} value={cashCollected} onChange={setCashCollected} />
          <BusyButton type="submit" className="big" busy={step.isPending}>
            Delivered
          </BusyButton>
        </form>
      )}
      <ErrorBox error={step.error} />
      <button type="button" className="big secondary danger-text" onClick={() => setFailing(true)}>
        Failed
      </button>
    </div>
  );
}

function RideSteps({ ride, onChanged }: { ride: Ride; onChanged: (job: Job) => void }) {
  const [cancelling, setCancelling] = useState(false);
  const [reason, setReason] = useState('');
  const step = useMutation({
    networkMode: 'always',
    mutationFn: (action: 'arrive' | 'start' | 'complete' | 'cancel') =>
      performStep(
        { jobType: 'RIDE', job: ride },
        action === 'arrive'
          ? { action, expect: 'ARRIVED', label: 'Arrived' }
          : action === 'start'
            ? { action, expect: 'IN_PROGRESS', label: 'Start trip' }
            : action === 'complete'
              ? { action, expect: 'COMPLETED', label: 'Complete trip' }
              : {
                  action,
                  expect: 'CANCELLED',
                  label: 'Cancel ride',
                  body: reason.trim() ? { reason: reason.trim() } : {},
                },
      ),
    onSuccess: (job) => onChanged(job),
  });
  const [action, label] =
    ride.status === 'ACCEPTED'
      ? (['arrive', 'Arrived'] as const)
      : ride.status === 'ARRIVED'
        ? (['start', 'Start trip'] as const)
        : (['complete', 'Complete trip'] as const);
  // The driver may cancel before the trip starts (ACCEPTED, ARRIVED), saying why (contract sections 10 and 19).
  const mayCancel = ride.status === 'ACCEPTED' || ride.status === 'ARRIVED';
  if (cancelling && mayCancel) {
    return (
      <form
        className="steps"
        onSubmit={(e) => {
          e.preventDefault();
          step.mutate('cancel');
        }}
      >
        <Field
          label="Reason"
          maxLength={500}
          value={reason}
          onChange={(e) => setReason(e.target.value)}
          hint="Optional: why the ride cannot be made"
        />
        <ErrorBox error={step.error} />
        <BusyButton type="submit" className="big danger" busy={step.isPending}>
          Cancel ride
        </BusyButton>
        <button type="button" className="big secondary" onClick={() => setCancelling(false)}>
          Back
        </button>
      </form>
    );
  }
  return (
    <div className="steps">
      <BusyButton type="button" className="big" busy={step.isPending} onClick={() => step.mutate(action)}>
        {label}
      </BusyButton>
      {mayCancel && (
        <button type="button" className="big secondary" onClick={() => setCancelling(true)}>
          Cancel ride
        </button>
      )}
      <ErrorBox error={step.error} />
    </div>
  );
}

/** The steps tapped offline that wait for the network (offline-queue.ts). */
function QueuedSteps({ jobId }: { jobId: string }) {
  const steps = useQueuedSteps(jobId);
  if (!steps.length) return null;
  return (
    <div className="queued" role="status">
      <p>
        <strong>Queued</strong>: sent in this order when the phone is back online.
      </p>
      <ul>
        {steps.map((s) => (
          <li key={s.key}>{s.label}</li>
        ))}
      </ul>
    </div>
  );
}
