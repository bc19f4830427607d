// The customer app (contract section 20): sign in or create an account, then book a ride and follow
// it live, send a package and follow it, and the past rides and packages.
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { api, ok, signOut } from '../shared/api/client';
import { session } from '../shared/api/session';
import type { User } from '../shared/api/types';
import { AppHeader, PublicShell, useBrowserOnline } from '../shared/app-shell';
import { RegisterForm, SignInForm } from '../shared/auth';
import { DeliveryPage } from '../shared/deliveries/detail';
import { NewDeliveryPage } from '../shared/deliveries/new';
import { NotificationsSwitch, unsubscribePush } from '../shared/notifications';
import { customerKeys } from '../shared/query-keys';
import { ErrorBox } from '../shared/ui';
import { useStoredSession, useUser } from '../shared/use-session';
import { BookRide, type Trip } from './book';
import { History } from './history';
import { RideView } from './ride';
import { ACTIVE_RIDE, type Ride } from './types';
import { BRAND, Title } from './ui';

type Tab = 'ride' | 'package' | 'history';
type Screen = { tab: Tab; rideId?: string; packageId?: string; trip?: Trip; key: number };

const SCOPE = '/app/';

/** The job a URL opens: a notification's tap opens /app/?ride=<id> or /app/?package=<id> (push-sw.js). */
function jobOf(url: string): Omit<Screen, 'key'> | undefined {
  const query = new URL(url, location.href).searchParams;
  const rideId = query.get('ride');
  const packageId = query.get('package');
  if (rideId) return { tab: 'ride', rideId };
  if (packageId) return { tab: 'package', packageId };
  return undefined;
}

export function App() {
  const boot = useStoredSession();
  const user = useUser();
  const [signUp, setSignUp] = useState(false);
  if (boot.state === 'pending') {
    return (
      <PublicShell brand={BRAND}>
        <p role="status">Loading…</p>
      </PublicShell>
    );
  }
  if (boot.state === 'offline' && !user) {
    return (
      <PublicShell brand={BRAND}>
        <Title>Offline</Title>
        <p className="notice">No connection to the service. Rides can be booked once the phone is back online.</p>
        <button type="button" className="big" onClick={boot.retry}>
          Try again
        </button>
      </PublicShell>
    );
  }
  if (!user) return signUp ? <SignUp onSignIn={() => setSignUp(false)} /> : <SignIn onSignUp={() => setSignUp(true)} />;
  if (user.role !== 'CUSTOMER') {
    return (
      <PublicShell brand={BRAND}>
        <Title>This app is for customers</Title>
        <p>
          Drivers use <a href="/driver/">the driver app</a>; businesses, companies and administrators{' '}
          <a href="/">the web console</a>.
        </p>
        <button type="button" className="big secondary" onClick={() => void signOut()}>
          Sign out
        </button>
      </PublicShell>
    );
  }
  return <Home user={user} />;
}

function SignIn({ onSignUp }: { onSignUp: () => void }) {
  return (
    <PublicShell brand={BRAND}>
      <Title>Sign in</Title>
      <SignInForm big rememberMe />
      <p className="center">
        New here?{' '}
        <button type="button" className="link" onClick={onSignUp}>
          Create an account
        </button>
      </p>
    </PublicShell>
  );
}

/** A customer's account is active at once: registering signs in (the API gives the tokens). */
function SignUp({ onSignIn }: { onSignIn: () => void }) {
  return (
    <PublicShell brand={BRAND}>
      <Title>Create an account</Title>
      <RegisterForm
        big
        submitLabel="Create account"
        body={(common) => ({ ...common, role: 'CUSTOMER', rememberMe: true })}
        onRegistered={(data) => {
          if (data.accessToken && data.refreshToken)
            session.signedIn({
              accessToken: data.accessToken,
              refreshToken: data.refreshToken,
              user: data.user as User,
            });
        }}
        done={(data) => (
          <>
            <p className="notice" role="status">
              {data.message}
            </p>
            <button type="button" className="big" onClick={onSignIn}>
              Sign in
            </button>
          </>
        )}
      />
      <p className="center">
        <button type="button" className="link" onClick={onSignIn}>
          I have an account: sign in
        </button>
      </p>
    </PublicShell>
  );
}

function Home({ user }: { user: User }) {
  const qc = useQueryClient();
  const online = useBrowserOnline();
  // Opened from a notification: that job first (the query is dropped, so a reload starts afresh).
  const [screen, setScreen] = useState<Screen>(() => {
    const opened = jobOf(location.href);
    if (opened) history.replaceState(history.state, '', SCOPE);
    return { ...(opened ?? { tab: 'ride' }), key: opened ? 1 : 0 };
  });
  const go = (next: Omit<Screen, 'key'>) => setScreen((s) => ({ ...next, key: s.key + 1 }));
  // A notification tapped while the app is open: the worker tells this window (push-sw.js).
  useEffect(() => {
    if (!('serviceWorker' in navigator)) return;
    const onMessage = (event: MessageEvent<{ type?: string; url?: string }>) => {
      const opened =
        event.data?.type === 'notification.click' && typeof event.data.url === 'string'
          ? jobOf(event.data.url)
          : undefined;
      if (opened) go(opened);
    };
    navigator.serviceWorker.addEventListener('message', onMessage);
    return () => navigator.serviceWorker.removeEventListener('message', onMessage);
  }, []);
  // A ride still on its way (the app was closed meanwhile) is shown first.
  const current = useQuery({
    queryKey: customerKeys.activeRides,
    queryFn: () => ok(api.GET('/api/rides', { params: { query: { limit: 5 } } })),
    staleTime: Infinity,
  });
  useEffect(() => {
    const active = current.data?.items.find((r) => ACTIVE_RIDE.includes(r.status as Ride['status']));
    if (active && screen.tab === 'ride' && !screen.rideId && screen.key === 0) go({ tab: 'ride', rideId: active.id });
    // eslint-disable-next-line react-hooks/exhaustive-deps -- only when the active rides arrive: a later screen change must not be overridden
  }, [current.data]);
  const countryId = user.countryId ?? '';

  return (
    <>
      <AppHeader<Tab>
        tabs={[
          { id: 'ride', label: 'Ride' },
          { id: 'package', label: 'Send a package' },
          { id: 'history', label: 'History' },
        ]}
        current={screen.tab}
        onTab={(tab) => go({ tab })}
        onSignOut={() =>
          void unsubscribePush(SCOPE)
            .catch(() => undefined)
            .then(() => signOut())
            .then(() => qc.clear())
        }
      />
      <main id="main" key={screen.key}>
        {!online && (
          <p className="offline-banner" role="status">
            Offline: what you see is as last loaded.
          </p>
        )}
        {screen.tab === 'ride' &&
          (screen.rideId ? (
            <RideView id={screen.rideId} onAgain={(trip) => go({ tab: 'ride', trip })} />
          ) : !countryId ? (
            <ErrorBox error={new Error('Your account has no country: booking needs one.')} />
          ) : (
            <BookRide
              countryId={countryId}
              initial={screen.trip}
              onRequested={(ride) => go({ tab: 'ride', rideId: ride.id })}
            />
          ))}
        {screen.tab === 'package' &&
          (screen.packageId ? (
            <DeliveryPage id={screen.packageId} />
          ) : (
            <NewDeliveryPage href={() => '/app/'} onOpen={(id) => go({ tab: 'package', packageId: id })} />
          ))}
        {screen.tab === 'history' && (
          <History
            onRide={(id) => go({ tab: 'ride', rideId: id })}
            onPackage={(id) => go({ tab: 'package', packageId: id })}
            account={
              <NotificationsSwitch
                scope={SCOPE}
                onHint="This phone hears when a driver accepts, arrives and when the ride ends, also while the app is closed."
                offHint="Turn on to hear when a driver accepts, arrives and when the ride ends, also while the app is closed."
              />
            }
          />
        )}
      </main>
    </>
  );
}
