// The driver's ratings (GET /drivers/me/ratings): those it received, stars only (no comment, no
// rater: the server sends neither), and those it gave, with what it wrote. Newest first, "More" for
// the next page.
import { useInfiniteQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, ok } from '../shared/api/client';
import { driverKeys } from '../shared/query-keys';
import { ErrorBox, formatTime } from '../shared/ui';
import { Title } from './ui';

type Side = 'received' | 'given';

const stars = (n: number) => '★'.repeat(n) + '☆'.repeat(Math.max(0, 5 - n));

export function RatingsScreen() {
  const [side, setSide] = useState<Side>('received');
  const list = useInfiniteQuery({
    queryKey: driverKeys.ratings(side),
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) =>
      ok(
        api.GET('/api/drivers/me/ratings', {
          params: { query: { side, limit: 20, ...(pageParam ? { cursor: pageParam } : {}) } },
        }),
      ),
    getNextPageParam: (last) => last.nextCursor ?? undefined,
  });
  const items = list.data?.pages.flatMap((p) => p.items) ?? [];
  return (
    <>
      <Title>Ratings</Title>
      <div className="buttons" role="group" aria-label="Which ratings">
        {(['received', 'given'] as const).map((s) => (
          <button
            key={s}
            type="button"
            className={`big${side === s ? '' : ' secondary'}`}
            aria-pressed={side === s}
            onClick={() => setSide(s)}
          >
            {s === 'received' ? 'Received' : 'Given'}
          </button>
        ))}
      </div>
      <ErrorBox error={list.error} />
      {list.data && items.length === 0 && (
        <p>{side === 'received' ? 'No ratings yet.' : 'You have not rated anyone yet.'}</p>
      )}
      <ul className="past" aria-label={side === 'received' ? 'Ratings received' : 'Ratings given'}>
        {items.map((r) => (
          <li key={r.id} className="card">
            <p>
              <span className="stars" role="img" aria-label={`${r.stars} of 5 stars`}>
                {stars(r.stars)}
              </span>{' '}
              <span className="muted">{r.jobType === 'PACKAGE' ? 'Delivery' : 'Ride'}</span>
            </p>
            <p className="muted">{formatTime(r.createdAt)}</p>
            {side === 'given' && r.comment && <p>{r.comment}</p>}
          </li>
        ))}
      </ul>
      {list.hasNextPage && (
        <button
          type="button"
          className="big secondary"
          disabled={list.isFetchingNextPage}
          onClick={() => void list.fetchNextPage()}
        >
          More
        </button>
      )}
    </>
  );
}
