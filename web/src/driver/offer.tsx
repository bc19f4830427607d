// The offer card (contract sections 13 and 19): full screen, with the pickup's distance and ETA, the
// pickup and drop-off areas, the price and a countdown; Accept or Decline. It leaves the screen when
// the deadline passes or the server withdraws the offer (the parent drops it).
import { useEffect, useRef, useState } from 'react';
import { useMutation } from '@tanstack/react-query';
import { api, ok } from '../shared/api/client';
import { BusyButton, ErrorBox, formatMoney } from '../shared/ui';
import type { Offer, Package, Ride } from './types';
import { formatDistance, formatDuration, formatPoint } from './ui';

let audio: AudioContext | undefined;

/** Called from a tap ("Go online"): browsers let a page make sound only after the user touched it. */
export function unlockSound() {
  try {
    audio ??= new AudioContext();
    void audio.resume();
  } catch {
    audio = undefined;
  }
}

function alert() {
  try {
    navigator.vibrate?.([300, 150, 300]);
  } catch {
    // Not allowed (no tap yet, or the phone says no).
  }
  if (!audio || audio.state !== 'running') return;
  const tone = audio.createOscillator();
  const gain = audio.createGain();
  tone.frequency.value = 880;
  gain.gain.setValueAtTime(0.2, audio.currentTime);
  gain.gain.exponentialRampToValueAtTime(0.001, audio.currentTime + 0.6);
  tone.connect(gain).connect(audio.destination);
  tone.start();
  tone.stop(audio.currentTime + 0.6);
}

export function useSecondsLeft(expiresAt: string): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 250);
    return () => clearInterval(timer);
  }, []);
  return Math.max(0, Math.ceil((Date.parse(expiresAt) - now) / 1000));
}

export function OfferCard({
  offer,
  onAccepted,
  onGone,
}: {
  offer: Offer;
  onAccepted: (job: Package | Ride) => void;
  onGone: () => void;
}) {
  const left = useSecondsLeft(offer.expiresAt);
  const accept = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    alert();
    accept.current?.focus();
  }, [offer.id]);
  useEffect(() => {
    if (left === 0) onGone();
  }, [left, onGone]);

  const accepting = useMutation({
    mutationFn: () => ok(api.POST('/api/offers/{id}/accept', { params: { path: { id: offer.id } } })),
    onSuccess: (job) => onAccepted(job as Package | Ride),
  });
  const declining = useMutation({
    mutationFn: () => ok(api.POST('/api/offers/{id}/decline', { params: { path: { id: offer.id } } })),
    onSettled: onGone,
  });

  return (
    <div className="offer-backdrop">
      <section
        className="offer"
        role="dialog"
        aria-modal="true"
        aria-label="Offer"
        aria-describedby={`offer-${offer.id}`}
      >
        <p className="offer-kind">{offer.jobType === 'PACKAGE' ? 'Delivery' : 'Ride'}</p>
        <p className="countdown" aria-live="off">
          <span className="countdown-value">{left}</span> s left
        </p>
        <dl className="details offer-details" id={`offer-${offer.id}`}>
          <dt>To the pickup</dt>
          <dd>
            {formatDistance(offer.distanceMeters)} · {formatDuration(offer.etaSeconds)}
          </dd>
          <dt>Pickup</dt>
          <dd>{offer.pickup.address ?? formatPoint(offer.pickup.location)}</dd>
          <dt>Drop-off</dt>
          <dd>{offer.dropoff ? formatPoint(offer.dropoff.location) : '—'}</dd>
          <dt>Price</dt>
          <dd className="price">{offer.price ? formatMoney(offer.price.amount, offer.price.currency) : '—'}</dd>
        </dl>
        <ErrorBox error={accepting.error} />
        <div className="offer-actions">
          <BusyButton
            ref={accept}
            type="button"
            className="big accept"
            busy={accepting.isPending || declining.isPending}
            onClick={() => accepting.mutate()}
          >
            Accept
          </BusyButton>
          <BusyButton
            type="button"
            className="big secondary"
            busy={accepting.isPending || declining.isPending}
            onClick={() => declining.mutate()}
          >
            Decline
          </BusyButton>
        </div>
        {accepting.error ? (
          <button type="button" className="link" onClick={onGone}>
            Close
          </button>
        ) : null}
      </section>
    </div>
  );
}
