// After a job ends (DELIVERED, COMPLETED), the driver rates who ordered it: the ride's customer or
// the package's creator (contract section 20). Stars are radio buttons "1 star" … "5 stars".
import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, ok } from '../shared/api/client';
import { BusyButton, ErrorBox } from '../shared/ui';

export interface RateTarget {
  jobType: 'PACKAGE' | 'RIDE';
  id: string;
}

const STARS = [1, 2, 3, 4, 5] as const;

export function RateStep({ target, onDone }: { target: RateTarget; onDone: () => void }) {
  const [stars, setStars] = useState<number>();
  const [done, setDone] = useState(false);
  const rate = useMutation({
    mutationFn: (value: number) => {
      const request = { params: { path: { id: target.id } }, body: { stars: value } };
      return ok(
        target.jobType === 'RIDE'
          ? api.POST('/api/rides/{id}/rating', request)
          : api.POST('/api/packages/{id}/rating', request),
      );
    },
    onSuccess: () => setDone(true),
  });
  const who = target.jobType === 'RIDE' ? 'the passenger' : 'the sender';
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (stars !== undefined) rate.mutate(stars);
  };
  if (done) {
    return (
      <section className="card" aria-label="Rating">
        <p role="status">Thanks: your rating was sent.</p>
        <button type="button" className="secondary" onClick={onDone}>
          Close
        </button>
      </section>
    );
  }
  return (
    <form className="card rate" onSubmit={submit} aria-label={`Rate ${who}`}>
      <fieldset>
        <legend>How was {who}?</legend>
        {STARS.map((n) => (
          <label key={n} className="star">
            <input type="radio" name="stars" value={n} checked={stars === n} onChange={() => setStars(n)} />
            {n === 1 ? '1 star' : `${n} stars`}
          </label>
        ))}
      </fieldset>
      <ErrorBox error={rate.error} />
      <div className="actions">
        <BusyButton type="submit" busy={rate.isPending} disabled={stars === undefined}>
          Rate
        </BusyButton>
        <button type="button" className="secondary" onClick={onDone}>
          Not now
        </button>
      </div>
    </form>
  );
}
