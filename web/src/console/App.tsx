// Routes and the signed-in shell (header, navigation by role, sign out).
import { useQueryClient } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import { signOut } from '../shared/api/client';
import { session } from '../shared/api/session';
import type { Role } from '../shared/api/types';
import { BusyButton, ErrorBox, PageTitle } from '../shared/ui';
import { useRestoredSession, useUser } from '../shared/use-session';
import { ApprovalsPage, UsersPage } from './admin/users';
import { LiveMapPage } from './admin/live-map';
import { ForgotPasswordPage, RegisterPage, SignInPage } from './auth/auth';
import { CompanyDriversPage } from './company/drivers';
import { CompanyEarningsPage } from './earnings/earnings';
import { DriverEarningsPage } from './earnings/driver-earnings';
import { DeliveryPage } from '../shared/deliveries/detail';
import { InvoicePage, InvoicesPage } from './invoices/invoices';
import { AdminInvoicesPage } from './invoices/admin-invoices';
import { BalancesPage } from './money/balances';
import { PayoutPage, PayoutsPage } from './money/payouts';
import { DeliveriesPage } from './deliveries/list';
import { NewDeliveryPage } from '../shared/deliveries/new';
import { AdminRatingsPage, BusinessRatingsPage, CompanyRatingsPage } from './ratings/ratings';
import { StatementPage } from './statement/statement';
import { TrackingPage } from './tracking/tracking';
import { WebhookPage, WebhooksPage } from './webhooks/webhooks';
import { RecurringJobPage, RecurringJobsPage } from './recurring/recurring';
import { ExceptionsPage } from './exceptions/exceptions';
import { Link, Redirect, match, navigate, useLocation } from './router';

const NAV: Record<Role, { to: string; label: string }[]> = {
  ADMIN: [
    { to: '/approvals', label: 'Approvals' },
    { to: '/users', label: 'Users' },
    { to: '/deliveries', label: 'Deliveries' },
    { to: '/exceptions', label: 'Exceptions' },
    { to: '/map', label: 'Live map' },
    { to: '/balances', label: 'Balances' },
    { to: '/payouts', label: 'Payouts' },
    { to: '/invoices', label: 'Invoices' },
    { to: '/ratings', label: 'Ratings' },
  ],
  BUSINESS: [
    { to: '/deliveries', label: 'Deliveries' },
    { to: '/deliveries/new', label: 'New delivery' },
    { to: '/exceptions', label: 'Exceptions' },
    { to: '/statement', label: 'Statement' },
    { to: '/invoices', label: 'Invoices' },
    { to: '/ratings', label: 'Ratings' },
    { to: '/webhooks', label: 'Webhooks' },
    { to: '/recurring', label: 'Recurring' },
  ],
  COMPANY: [
    { to: '/drivers', label: 'Drivers' },
    { to: '/earnings', label: 'Earnings' },
    { to: '/deliveries', label: 'Deliveries' },
    { to: '/exceptions', label: 'Exceptions' },
    { to: '/ratings', label: 'Ratings' },
  ],
  CUSTOMER: [{ to: '/deliveries', label: 'Deliveries' }],
  DRIVER: [],
};

const HOME: Record<Role, string> = {
  ADMIN: '/approvals',
  BUSINESS: '/deliveries',
  COMPANY: '/drivers',
  CUSTOMER: '/deliveries',
  DRIVER: '/driver',
};

function Shell({ children }: { children: ReactNode }) {
  const client = useQueryClient();
  const { path } = useLocation();
  const user = session.user!;
  const [leaving, setLeaving] = useState(false);
  return (
    <>
      <a href="#main" className="skip">
        Skip to content
      </a>
      <header className="topbar">
        <Link to="/" className="brand">
          Delivery console
        </Link>
        <nav aria-label="Main">
          <ul>
            {NAV[user.role].map((n) => (
              <li key={n.to}>
                <Link to={n.to} aria-current={path === n.to ? 'page' : undefined}>
                  {n.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <div className="who">
          <span>
            {user.firstName} {user.lastName} · {user.role.toLowerCase()}
          </span>
          <BusyButton
            type="button"
            className="secondary"
            busy={leaving}
            onClick={async () => {
              setLeaving(true);
              await signOut();
              client.clear();
              navigate('/login', { replace: true });
            }}
          >
            Sign out
          </BusyButton>
        </div>
      </header>
      {/* tabIndex -1: the skip link moves the focus here, so the next Tab is the page's first control. */}
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </>
  );
}

function NotFound() {
  return (
    <>
      <PageTitle>Page not found</PageTitle>
      <p>
        There is nothing at this address. <Link to="/">Go to the start page</Link>.
      </p>
    </>
  );
}

function signedInPage(path: string, role: Role): ReactNode {
  let p: Record<string, string> | undefined;
  if (path === '/') return <Redirect to={HOME[role]} />;
  if (path === '/deliveries' && role !== 'DRIVER') return <DeliveriesPage />;
  if (path === '/deliveries/new' && (role === 'BUSINESS' || role === 'CUSTOMER'))
    return <NewDeliveryPage href={(id) => `/deliveries/${id}`} onOpen={(id) => navigate(`/deliveries/${id}`)} />;
  if ((p = match('/deliveries/:id', path)) && role !== 'DRIVER') return <DeliveryPage key={p.id} id={p.id} />;
  if (path === '/exceptions' && (role === 'ADMIN' || role === 'BUSINESS' || role === 'COMPANY'))
    return <ExceptionsPage />;
  if (path === '/statement' && role === 'BUSINESS') return <StatementPage />;
  if (path === '/invoices' && role === 'BUSINESS') return <InvoicesPage />;
  if (path === '/invoices' && role === 'ADMIN') return <AdminInvoicesPage />;
  if ((p = match('/invoices/:id', path)) && role === 'BUSINESS') return <InvoicePage key={p.id} id={p.id} />;
  if (path === '/balances' && role === 'ADMIN') return <BalancesPage />;
  if (path === '/payouts' && role === 'ADMIN') return <PayoutsPage />;
  if ((p = match('/payouts/:id', path)) && role === 'ADMIN') return <PayoutPage key={p.id} id={p.id} />;
  if (path === '/webhooks' && role === 'BUSINESS') return <WebhooksPage />;
  if ((p = match('/webhooks/:id', path)) && role === 'BUSINESS') return <WebhookPage key={p.id} id={p.id} />;
  if (path === '/recurring' && role === 'BUSINESS') return <RecurringJobsPage />;
  if ((p = match('/recurring/:id', path)) && role === 'BUSINESS') return <RecurringJobPage key={p.id} id={p.id} />;
  if (path === '/approvals' && role === 'ADMIN') return <ApprovalsPage />;
  if (path === '/users' && role === 'ADMIN') return <UsersPage />;
  if (path === '/map' && role === 'ADMIN') return <LiveMapPage />;
  if (path === '/drivers' && role === 'COMPANY') return <CompanyDriversPage />;
  if (path === '/earnings' && role === 'COMPANY') return <CompanyEarningsPage />;
  if ((p = match('/drivers/:id/earnings', path)) && (role === 'ADMIN' || role === 'COMPANY'))
    return <DriverEarningsPage key={p.id} viewer={role} driverId={p.id} />;
  if (path === '/ratings' && role === 'ADMIN') return <AdminRatingsPage />;
  if (path === '/ratings' && role === 'COMPANY') return <CompanyRatingsPage />;
  if (path === '/ratings' && role === 'BUSINESS') return <BusinessRatingsPage />;
  if (path === '/driver') {
    return (
      <>
        <PageTitle>Drivers use the app</PageTitle>
        <p>This console is for businesses, companies and admins. Drivers work from the driver app.</p>
      </>
    );
  }
  return <NotFound />;
}

export function App() {
  const { path } = useLocation();
  const user = useUser();
  const { restoring, error } = useRestoredSession();

  const token = match('/t/:token', path);
  if (token) return <TrackingPage token={token.token} />;
  if (restoring) return <p role="status">Loading…</p>;

  if (!user) {
    if (path === '/forgot-password') return <ForgotPasswordPage />;
    if (path === '/register') return <RegisterPage />;
    if (path !== '/login') return <Redirect to="/login" />;
    return (
      <>
        {error ? <ErrorBox error={error} /> : null}
        <SignInPage />
      </>
    );
  }
  if (path === '/login' || path === '/register' || path === '/forgot-password') return <Redirect to="/" />;
  return <Shell>{signedInPage(path, user.role)}</Shell>;
}
