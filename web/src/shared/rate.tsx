// After a COMPLETED ride or a DELIVERED package, its customer or business (the customer app's ride
// and delivery pages, the console's delivery page): rate the driver (1 to 5 stars, a comment) and tip
// (once, within 24 h, at most the API's share of the price). The API answers with its own message
// when it is too late, already done, or too much.
import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { api, ok } from './api/client';
import { decimalsOf, parseAmount } from './money';
import { BusyButton, ErrorBox, Field, FocusNotice, formatMoney } from './ui';

type Money = { amount: number; currency: string };

/** An amount typed in major units as the currency's minor units ("50.5" KES → 5050, "0.29" IQD → 290); undefined when it is not one. */
export const toMinor = parseAmount;

const STARS = [1, 2, 3, 4, 5] as const;

export function RateAndTip({
  kind,
  id,
  price,
  tip,
  onChanged,
}: {
  kind: 'rides' | 'packages';
  id: string;
  price: Money | null;
  tip: Money | null | undefined;
  onChanged: () => void;
}) {
  const [stars, setStars] = useState<number>();
  const [comment, setComment] = useState('');
  const [amount, setAmount] = useState('');
  const params = { path: { id } };
  const rate = useMutation({
    mutationFn: () => {
      const body = { stars: stars!, ...(comment.trim() ? { comment: comment.trim() } : {}) };
      return ok(
        kind === 'rides'
          ? api.POST('/api/rides/{id}/rating', { params, body })
          : api.POST('/api/packages/{id}/rating', { params, body }),
      );
    },
    onSuccess: onChanged,
  });
  const give = useMutation({
    mutationFn: () => {
      const currency = price?.currency ?? 'KES';
      const minor = toMinor(amount, currency);
      if (minor === undefined)
        throw new Error(`Enter an amount in ${currency} with at most ${decimalsOf(currency)} decimals.`);
      const body = { amount: minor };
      return ok(
        kind === 'rides'
          ? api.POST('/api/rides/{id}/tip', { params, body })
          : api.POST('/api/packages/{id}/tip', { params, body }),
      );
    },
    onSuccess: onChanged,
  });

  return (
    <>
      <section className="card" aria-labelledby="rate-heading">
        <h2 id="rate-heading">Rate your driver</h2>
        {rate.isSuccess ? (
          <FocusNotice>Thank you for rating.</FocusNotice>
        ) : (
          <form
            onSubmit={(e) => {
              e.preventDefault();
              if (stars) rate.mutate();
            }}
          >
            <fieldset className="stars">
              <legend>Stars</legend>
              {STARS.map((n) => (
                <label key={n} className="star">
                  <input
                    type="radio"
                    name="stars"
                    value={n}
                    checked={stars === n}
                    onChange={() => setStars(n)}
                    aria-label={`${n} star${n === 1 ? '' : 's'}`}
                  />
                  <span aria-hidden="true">{'★'.repeat(n)}</span>
                </label>
              ))}
            </fieldset>
            <Field
              label="Comment (optional)"
              maxLength={500}
              value={comment}
              onChange={(e) => setComment(e.target.value)}
            />
            <ErrorBox error={rate.error} />
            <BusyButton type="submit" className="big" busy={rate.isPending} disabled={!stars}>
              Rate
            </BusyButton>
          </form>
        )}
      </section>
      <section className="card" aria-labelledby="tip-heading">
        <h2 id="tip-heading">Tip</h2>
        {tip ? (
          <p data-testid="tip">You tipped {formatMoney(tip.amount, tip.currency)}. All of it goes to the driver.</p>
        ) : give.isSuccess ? (
          <FocusNotice>Thank you: all of the tip goes to the driver.</FocusNotice>
        ) : (
          <form
            onSubmit={(e) => {
              e.preventDefault();
              give.mutate();
            }}
          >
            <Field
              label="Tip amount"
              type="number"
              inputMode="decimal"
              min={0}
              step="any"
              required
              value={amount}
              onChange={(e) => setAmount(e.target.value)}
              hint={price ? `In ${price.currency}; all of it goes to the driver` : undefined}
            />
            <ErrorBox error={give.error} />
            <BusyButton type="submit" className="big" busy={give.isPending}>
              Tip
            </BusyButton>
          </form>
        )}
      </section>
    </>
  );
}
