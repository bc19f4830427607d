// The driver app: sign in or register, then Home (online/offline, the offer, the current job) and
// Past jobs. Opened offline, it shows the job as last seen.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useCallback, useEffect, useState } from 'react';
import { api, ok, signOut } from '../shared/api/client';
import { session } from '../shared/api/session';
import { driverKeys as keys } from '../shared/query-keys';
import type { User } from '../shared/api/types';
import { BusyButton, ErrorBox, FocusNotice, Notice, StatusBadge, formatTime } from '../shared/ui';
import { AppHeader, useBrowserOnline } from '../shared/app-shell';
import { useStoredSession, useUser } from '../shared/use-session';
import { PublicShell, Register, SignIn } from './auth';
import { EarningsScreen } from './earnings';
import { isActive, JobView } from './job';
import { forgetJob, loadJob, saveJob } from './last-job';
import { useDriverLink, type LinkState } from './link';
import { NotificationsSwitch } from '../shared/notifications';
import { OfferCard, unlockSound } from './offer';
import { useStepReplay } from './offline-queue';
import { TraccarSetup } from './traccar';
import { RatingsScreen } from './ratings';
import { markSignedIn, sendPendingSignOuts, signOutDriver, stepsLostOnSignOut } from './sign-out';
import { RateStep, type RateTarget } from './rate';
import type { Job, Offer, Package, Ride } from './types';
import { formatPoint, Title } from './ui';

export function App() {
  const boot = useStoredSession(forgetJob);
  const user = useUser();
  const [screen, setScreen] = useState<'sign-in' | 'register'>('sign-in');
  // A sign-out made while the phone was offline goes out now.
  useEffect(() => void sendPendingSignOuts(), []);
  // The service worker shows offers only while a driver is signed in (opened offline: as it was).
  useEffect(() => {
    if (boot.state === 'ready') void markSignedIn(user?.role === 'DRIVER');
  }, [boot.state, user]);
  if (boot.state === 'pending') {
    return (
      <PublicShell>
        <p role="status">Loading…</p>
      </PublicShell>
    );
  }
  if (boot.state === 'offline' && !user)
    return <OfflineStart onRetry={boot.retry} onSignOut={() => void confirmSignOut()} />;
  if (!user)
    return screen === 'register' ? (
      <Register onSignIn={() => setScreen('sign-in')} />
    ) : (
      <SignIn onRegister={() => setScreen('register')} />
    );
  if (user.role !== 'DRIVER') return <NotADriver />;
  return <Home user={user} />;
}

/**
 * Signs out after saying how many steps queued offline would be lost; false when the driver kept them.
 * Online or not, nothing of this driver stays on the phone (./sign-out.ts).
 */
async function confirmSignOut(): Promise<boolean> {
  const lost = stepsLostOnSignOut();
  if (
    lost > 0 &&
    !window.confirm(
      `${lost} step${lost === 1 ? '' : 's'} taken offline ${lost === 1 ? 'has' : 'have'} not reached the service yet and will be lost. Sign out anyway?`,
    )
  )
    return false;
  await signOutDriver();
  return true;
}

/** Opened with no network: the job as last seen, read-only, and a way to try again. */
function OfflineStart({ onRetry, onSignOut }: { onRetry: () => void; onSignOut: () => void }) {
  const saved = loadJob();
  return (
    <PublicShell>
      <Title>Offline</Title>
      <Notice>No connection to the service. Steps can be taken once the phone is back online.</Notice>
      {saved && isActive(saved.job) ? (
        <>
          <p className="muted">Your current job as last seen at {formatTime(saved.savedAt)}:</p>
          <JobView job={saved.job} readOnly onChanged={() => undefined} />
        </>
      ) : (
        <p>No current job was saved on this phone.</p>
      )}
      <button type="button" className="big" onClick={onRetry}>
        Try again
      </button>
      <button type="button" className="big secondary" onClick={onSignOut}>
        Sign out
      </button>
    </PublicShell>
  );
}

function NotADriver() {
  return (
    <PublicShell>
      <Title>This app is for drivers</Title>
      <p>Businesses, companies and administrators use the web console.</p>
      <p>
        <a href="/">Open the console</a>
      </p>
      <button type="button" className="big secondary" onClick={() => void signOut()}>
        Sign out
      </button>
    </PublicShell>
  );
}

const asJob = (job: Package | Ride): Job =>
  job.orderType === 'RIDE' ? { jobType: 'RIDE', job: job as Ride } : { jobType: 'PACKAGE', job: job as Package };

function Home({ user }: { user: User }) {
  const qc = useQueryClient();
  const [tab, setTab] = useState<'home' | 'past' | 'earnings' | 'ratings' | 'traccar'>('home');
  const [offers, setOffers] = useState<Offer[]>([]);
  const [outcome, setOutcome] = useState<{ key: number; text: string }>();
  const [toRate, setToRate] = useState<RateTarget>();
  const browserOnline = useBrowserOnline();

  const me = useQuery({ queryKey: keys.me, queryFn: () => ok(api.GET('/api/drivers/me')) });
  const online = me.data?.availability === 'ONLINE';
  const jobs = useQuery({ queryKey: keys.jobs, queryFn: () => ok(api.GET('/api/drivers/me/jobs')) });
  const active = jobs.data?.active ?? undefined;
  const detail = useQuery({
    enabled: active !== undefined,
    queryKey: keys.job(active?.jobType, active?.id),
    queryFn: async (): Promise<Job> =>
      active!.jobType === 'PACKAGE'
        ? { jobType: 'PACKAGE', job: await ok(api.GET('/api/packages/{id}', { params: { path: { id: active!.id } } })) }
        : { jobType: 'RIDE', job: await ok(api.GET('/api/rides/{id}', { params: { path: { id: active!.id } } })) },
  });
  useEffect(() => {
    if (detail.data && isActive(detail.data)) saveJob(detail.data);
  }, [detail.data]);
  useEffect(() => {
    if (jobs.data && !jobs.data.active) forgetJob();
  }, [jobs.data]);

  const refreshJobs = useCallback(() => {
    void qc.invalidateQueries({ queryKey: keys.jobs });
    void qc.invalidateQueries({ queryKey: keys.anyJob });
  }, [qc]);

  const link = useDriverLink(online, {
    onMessage: (m) => {
      if (m.type === 'offer') setOffers((list) => [...list.filter((o) => o.id !== m.offer.id), m.offer]);
      else if (m.type === 'offer.withdrawn') setOffers((list) => list.filter((o) => o.id !== m.offerId));
      else if (m.type === 'job.assigned' || m.type === 'job.updated') refreshJobs();
    },
    onConnected: () => {
      ok(api.GET('/api/drivers/me/offers')).then(
        (r) => setOffers(r.offers),
        () => undefined,
      );
      refreshJobs();
    },
    onSessionEnded: () => {
      forgetJob();
      session.clear();
      qc.clear();
    },
  });

  // A push's tap: /driver/?offer=<id> on a cold start, or the worker's message to the open app. The
  // offers are read at once (not when the socket connects): that offer, or why it is not there.
  const openOffer = useCallback((offerId: string) => {
    ok(api.GET('/api/drivers/me/offers')).then(
      (r) => {
        const tapped = r.offers.filter((o) => o.id === offerId && Date.parse(o.expiresAt) > Date.now());
        setOffers([...tapped, ...r.offers.filter((o) => o.id !== offerId)]);
        if (!tapped.length) setOutcome({ key: Date.now(), text: 'This offer has lapsed or was taken.' });
      },
      () => setOutcome({ key: Date.now(), text: 'The offer could not be read: no connection to the service.' }),
    );
  }, []);
  useEffect(() => {
    const params = new URLSearchParams(window.location.search);
    const offerId = params.get('offer');
    if (offerId) {
      // Dropped at once: a reload or the back button does not open it again.
      params.delete('offer');
      const rest = params.toString();
      window.history.replaceState(
        window.history.state,
        '',
        `${window.location.pathname}${rest ? `?${rest}` : ''}${window.location.hash}`,
      );
      openOffer(offerId);
    }
    if (!('serviceWorker' in navigator)) return;
    const onMessage = (e: MessageEvent) => {
      const data = e.data as { type?: unknown; offerId?: unknown } | null;
      if (data?.type === 'notification.click' && typeof data.offerId === 'string') openOffer(data.offerId);
    };
    navigator.serviceWorker.addEventListener('message', onMessage);
    return () => navigator.serviceWorker.removeEventListener('message', onMessage);
  }, [openOffer]);

  const availability = useMutation({
    mutationFn: (status: 'ONLINE' | 'OFFLINE') => ok(api.POST('/api/drivers/me/availability', { body: { status } })),
    onSuccess: (driver) => {
      qc.setQueryData(keys.me, driver);
      if (driver.availability !== 'ONLINE') setOffers([]);
    },
  });

  const jobChanged = (job: Job & { queued?: boolean }) => {
    qc.setQueryData(keys.job(job.jobType, job.job.id), job);
    if (!isActive(job)) {
      forgetJob();
      if (job.job.status === 'DELIVERED' || job.job.status === 'COMPLETED')
        setToRate({ jobType: job.jobType, id: job.job.id });
      const released = job.job.status === 'PENDING' || job.job.status === 'REQUESTED';
      const done =
        job.job.status === 'DELIVERED'
          ? 'Delivered. Well done.'
          : job.job.status === 'COMPLETED'
            ? 'Trip completed.'
            : released
              ? 'Job released: it goes to another driver.'
              : `The job is ${job.job.status.toLowerCase().replace(/_/g, ' ')}.`;
      setOutcome({
        key: Date.now(),
        text: job.queued ? `${done} (Queued: it is sent when the phone is back online.)` : done,
      });
    }
    if (!job.queued) void qc.invalidateQueries({ queryKey: keys.jobs });
  };
  // Steps tapped offline go out in order once the phone is back; the server's answer wins.
  useStepReplay({
    applied: jobChanged,
    refused: (step, err, job) => {
      if (job) qc.setQueryData(keys.job(job.jobType, job.job.id), job);
      if (job && !isActive(job)) forgetJob();
      const now = job ? ` The job is ${job.job.status.toLowerCase().replace(/_/g, ' ')}.` : '';
      setOutcome({
        key: Date.now(),
        text: `“${step.label}” was not applied: ${err.message}.${now}`.replace('..', '.'),
      });
      refreshJobs();
    },
  });

  const dropOffer = useCallback((id: string) => setOffers((list) => list.filter((o) => o.id !== id)), []);
  const offer = offers.find((o) => Date.parse(o.expiresAt) > Date.now());
  const saved = jobs.isError || (active && detail.isError) ? loadJob() : undefined;
  const shown = detail.data ?? (saved && isActive(saved.job) ? saved.job : undefined);

  // The server sets the driver OFFLINE and deletes this phone's subscription with the logout.
  const leave = async () => {
    if (await confirmSignOut()) qc.clear();
  };

  return (
    <>
      <AppHeader
        brand="Driver"
        tabs={[
          { id: 'home', label: 'Home' },
          { id: 'past', label: 'Past jobs' },
          { id: 'earnings', label: 'Earnings' },
        ]}
        current={tab}
        onTab={setTab}
        onSignOut={() => void leave()}
      />
      <main id="main">
        {!browserOnline && (
          <p className="offline-banner" role="status">
            Offline: showing what was last seen. Steps wait until the phone is back online.
          </p>
        )}
        {tab === 'earnings' ? (
          <EarningsScreen />
        ) : tab === 'ratings' ? (
          <>
            <RatingsScreen />
            <button type="button" className="big secondary" onClick={() => setTab('home')}>
              Back
            </button>
          </>
        ) : tab === 'traccar' ? (
          <>
            <TraccarSetup />
            <button type="button" className="big secondary" onClick={() => setTab('home')}>
              Back
            </button>
          </>
        ) : tab === 'past' ? (
          <PastJobs jobs={jobs.data?.recent} error={jobs.error} />
        ) : (
          <>
            <Title>Hello, {user.firstName}</Title>
            {outcome && <FocusNotice key={outcome.key}>{outcome.text}</FocusNotice>}
            {toRate && <RateStep key={toRate.id} target={toRate} onDone={() => setToRate(undefined)} />}
            {/* On a job, the job comes first; availability and the link's state below it. */}
            {shown && (
              <>
                {!detail.data && saved && <p className="muted">As last seen at {formatTime(saved.savedAt)}.</p>}
                <JobView job={shown} readOnly={!detail.data} onChanged={jobChanged} />
              </>
            )}
            <ErrorBox error={jobs.error ?? detail.error} />
            <section className="card availability" aria-label="Availability">
              <p>
                You are <StatusBadge status={online ? 'ONLINE' : 'OFFLINE'} />
              </p>
              {online ? (
                <BusyButton
                  type="button"
                  className="big secondary"
                  busy={availability.isPending}
                  onClick={() => availability.mutate('OFFLINE')}
                >
                  Go offline
                </BusyButton>
              ) : (
                <BusyButton
                  type="button"
                  className="big"
                  busy={availability.isPending || me.isPending}
                  onClick={() => {
                    unlockSound();
                    availability.mutate('ONLINE');
                  }}
                >
                  Go online
                </BusyButton>
              )}
              <ErrorBox error={availability.error ?? me.error} />
              {online && <LinkStatus link={link} />}
              <NotificationsSwitch
                scope="/driver/"
                onHint="Offers reach this phone while the app is closed."
                offHint="Turn on to hear of offers while the app is closed."
              />
              <button type="button" className="big secondary" onClick={() => setTab('traccar')}>
                Background positions (Traccar Client)
              </button>
              <button type="button" className="big secondary" onClick={() => setTab('ratings')}>
                Ratings
              </button>
            </section>
            {!shown && jobs.data && (
              <p className="muted">{online ? 'No job yet: offers appear here.' : 'Go online to receive offers.'}</p>
            )}
          </>
        )}
      </main>
      {offer && (
        <OfferCard
          key={offer.id}
          offer={offer}
          onGone={() => dropOffer(offer.id)}
          onAccepted={(job) => {
            dropOffer(offer.id);
            setOutcome(undefined);
            setToRate(undefined);
            setTab('home');
            jobChanged(asJob(job));
          }}
        />
      )}
    </>
  );
}

function useNow(ms: number): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(timer);
  }, [ms]);
  return now;
}

const ago = (now: number, at: number) => {
  const s = Math.max(0, Math.round((now - at) / 1000));
  return s < 60 ? `${s} s ago` : `${Math.round(s / 60)} min ago`;
};

function LinkStatus({ link }: { link: LinkState }) {
  const now = useNow(1000);
  const connection =
    link.socket === 'open'
      ? 'Connected'
      : link.socket === 'connecting'
        ? 'Connecting…'
        : link.socket === 'waiting' && link.retryAt
          ? `Reconnecting in ${Math.max(1, Math.round((link.retryAt - now) / 1000))} s`
          : 'Not connected';
  return (
    <dl className="details link-status">
      <dt>Connection</dt>
      <dd>{connection}</dd>
      <dt>GPS accuracy</dt>
      <dd>
        {link.gpsError ?? (link.accuracy !== undefined ? `± ${Math.round(link.accuracy)} m` : 'Waiting for a GPS fix…')}
      </dd>
      <dt>Last position sent</dt>
      <dd>{link.lastSentAt ? ago(now, link.lastSentAt) : 'Not yet'}</dd>
      <dt>Screen</dt>
      <dd>
        {link.wakeLock === 'on'
          ? 'Kept awake'
          : link.wakeLock === 'unavailable'
            ? 'May sleep (this browser cannot keep it awake)'
            : 'May sleep'}
      </dd>
    </dl>
  );
}

function PastJobs({
  jobs,
  error,
}: {
  jobs:
    | {
        jobType: string;
        id: string;
        status: string;
        pickupLocation: { lat: number; lng: number };
        destinationLocation: { lat: number; lng: number };
        updatedAt: string;
      }[]
    | undefined;
  error: unknown;
}) {
  return (
    <>
      <Title>Past jobs</Title>
      <ErrorBox error={error} />
      {jobs && jobs.length === 0 && <p>No jobs yet.</p>}
      <ul className="past">
        {jobs?.map((j) => (
          <li key={j.id} className="card">
            <p>
              <strong>{j.jobType === 'PACKAGE' ? 'Delivery' : 'Ride'}</strong> <StatusBadge status={j.status} />
            </p>
            <p className="muted">{formatTime(j.updatedAt)}</p>
            <p>
              {formatPoint(j.pickupLocation)} → {formatPoint(j.destinationLocation)}
            </p>
          </li>
        ))}
      </ul>
    </>
  );
}
