// Admin: the approvals queue, users (filter, suspend, reactivate).
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useRef, useState, type ReactNode } from 'react';
import { api, ok } from '../../shared/api/client';
import type { Schemas } from '../../shared/api/types';
import { queryKeys } from '../../shared/query-keys';
import {
  BusyButton,
  ErrorBox,
  Field,
  FocusNotice,
  PageTitle,
  SelectField,
  StatusBadge,
  formatTime,
  useFocusAfterRender,
} from '../../shared/ui';
import { Pager, useCursors } from '../pager';

type User = Schemas['/api/admin/users/{id}']['get']['responses'][200]['content']['application/json'];
const ROLES = ['CUSTOMER', 'DRIVER', 'BUSINESS', 'COMPANY', 'ADMIN'] as const;
const STATUSES = ['ACTIVE', 'PENDING_APPROVAL', 'REJECTED', 'SUSPENDED'] as const;

function useUsers(
  filter: { role?: (typeof ROLES)[number]; status?: (typeof STATUSES)[number] },
  cursor: string | undefined,
) {
  return useQuery({
    queryKey: queryKeys.usersPage(filter, cursor),
    queryFn: () =>
      ok(api.GET('/api/admin/users', { params: { query: { limit: 20, ...filter, ...(cursor ? { cursor } : {}) } } })),
  });
}

type Action = 'approve' | 'reject' | 'suspend' | 'reactivate';
const DONE: Record<Action, string> = {
  approve: 'approved',
  reject: 'rejected',
  suspend: 'suspended',
  reactivate: 'reactivated',
};

/** What an action on a user did, for the page's message: "Wanjiru Shop approved." */
type Done = (user: User, action: Action) => void;

function useUserAction(onDone?: Done) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ user, action, reason }: { user: User; action: Action; reason?: string }) => {
      const params = { path: { id: user.id } };
      switch (action) {
        case 'approve':
          return ok(api.POST('/api/admin/users/{id}/approve', { params }));
        case 'reactivate':
          return ok(api.POST('/api/admin/users/{id}/reactivate', { params }));
        case 'reject':
          return ok(api.POST('/api/admin/users/{id}/reject', { params, body: { reason: reason ?? '' } }));
        case 'suspend':
          return ok(api.POST('/api/admin/users/{id}/suspend', { params, body: { reason: reason ?? '' } }));
      }
    },
    // Said before the list is read again: the message takes the focus from the row's button while
    // the button is still there (the row leaves the approvals, or the button changes).
    onSuccess: (_, { user, action }) => {
      onDone?.(user, action);
      return client.invalidateQueries({ queryKey: queryKeys.users });
    },
  });
}

/** The last action's message, focused (a new key for each one). */
function useDone(): [Done, ReactNode] {
  const [done, setDone] = useState<{ n: number; text: string }>();
  const report: Done = (user, action) =>
    setDone((d) => ({ n: (d?.n ?? 0) + 1, text: `${name(user)} ${DONE[action]}.` }));
  return [report, done ? <FocusNotice key={done.n}>{done.text}</FocusNotice> : null];
}

function name(u: User) {
  return `${u.firstName} ${u.lastName}`;
}

/** A reason, asked inline (no window.prompt: it is not accessible and tests cannot label it). */
function ReasonAction({
  user,
  action,
  label,
  onDone,
}: {
  user: User;
  action: 'reject' | 'suspend';
  label: string;
  onDone: Done;
}) {
  const [open, setOpen] = useState(false);
  const [reason, setReason] = useState('');
  const act = useUserAction(onDone);
  const toggle = useRef<HTMLButtonElement>(null);
  const focusAfterRender = useFocusAfterRender();
  if (!open) {
    return (
      <button
        ref={toggle}
        type="button"
        className="danger"
        onClick={() => setOpen(true)}
        aria-label={`${label} ${name(user)}`}
      >
        {label}
      </button>
    );
  }
  return (
    <form
      className="inline-form"
      onSubmit={(e) => {
        e.preventDefault();
        act.mutate({ user, action, reason });
      }}
    >
      <Field
        label={`Reason to ${label.toLowerCase()} ${name(user)}`}
        required
        maxLength={500}
        autoFocus
        value={reason}
        onChange={(e) => setReason(e.target.value)}
      />
      <BusyButton type="submit" className="danger" busy={act.isPending}>
        Confirm {label.toLowerCase()}
      </BusyButton>
      <button
        type="button"
        className="secondary"
        onClick={() => {
          setOpen(false);
          focusAfterRender(() => toggle.current);
        }}
      >
        Keep
      </button>
      <ErrorBox error={act.error} />
    </form>
  );
}

export function ApprovalsPage() {
  const { cursors, setCursors } = useCursors();
  const users = useUsers({ status: 'PENDING_APPROVAL' }, cursors[cursors.length - 1]);
  const [onDone, doneNotice] = useDone();
  const act = useUserAction(onDone);
  return (
    <>
      <div className="page-head">
        <PageTitle>Approvals</PageTitle>
        <button type="button" className="secondary" onClick={() => void users.refetch()}>
          Refresh
        </button>
      </div>
      <p>Businesses, companies and drivers wait here until an admin approves them.</p>
      <ErrorBox error={users.error ?? act.error} />
      {doneNotice}
      {users.data?.items.length === 0 && <p>Nobody is waiting for approval.</p>}
      {users.data && users.data.items.length > 0 && (
        <table>
          <caption className="sr-only">Accounts pending approval</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Role</th>
              <th scope="col">Email</th>
              <th scope="col">Phone</th>
              <th scope="col">Registered</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {users.data.items.map((u) => (
              <tr key={u.id}>
                <td>{name(u)}</td>
                <td>{u.role}</td>
                <td>{u.email}</td>
                <td>{u.phone}</td>
                <td>{formatTime(u.createdAt)}</td>
                <td className="actions">
                  <BusyButton
                    type="button"
                    onClick={() => act.mutate({ user: u, action: 'approve' })}
                    busy={act.isPending}
                    aria-label={`Approve ${name(u)}`}
                  >
                    Approve
                  </BusyButton>
                  <ReasonAction user={u} action="reject" label="Reject" onDone={onDone} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager next={users.data?.nextCursor} cursors={cursors} setCursors={setCursors} />
    </>
  );
}

export function UsersPage() {
  const [role, setRole] = useState<(typeof ROLES)[number] | ''>('');
  const [status, setStatus] = useState<(typeof STATUSES)[number] | ''>('');
  const { cursors, setCursors } = useCursors();
  const users = useUsers({ ...(role ? { role } : {}), ...(status ? { status } : {}) }, cursors[cursors.length - 1]);
  const [onDone, doneNotice] = useDone();
  const act = useUserAction(onDone);
  return (
    <>
      <div className="page-head">
        <PageTitle>Users</PageTitle>
        <button type="button" className="secondary" onClick={() => void users.refetch()}>
          Refresh
        </button>
      </div>
      <div className="toolbar">
        <SelectField
          label="Role"
          value={role}
          onChange={(e) => {
            setRole(e.target.value as typeof role);
            setCursors([]);
          }}
        >
          <option value="">All</option>
          {ROLES.map((r) => (
            <option key={r}>{r}</option>
          ))}
        </SelectField>
        <SelectField
          label="Account status"
          value={status}
          onChange={(e) => {
            setStatus(e.target.value as typeof status);
            setCursors([]);
          }}
        >
          <option value="">All</option>
          {STATUSES.map((s) => (
            <option key={s} value={s}>
              {s.replace(/_/g, ' ')}
            </option>
          ))}
        </SelectField>
      </div>
      <ErrorBox error={users.error ?? act.error} />
      {doneNotice}
      {users.data && (
        <table>
          <caption className="sr-only">Accounts, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Role</th>
              <th scope="col">Status</th>
              <th scope="col">Email</th>
              <th scope="col">Phone</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {users.data.items.map((u) => (
              <tr key={u.id}>
                <td>{name(u)}</td>
                <td>{u.role}</td>
                <td>
                  <StatusBadge status={u.status} />
                </td>
                <td>{u.email}</td>
                <td>{u.phone}</td>
                <td className="actions">
                  {(u.status === 'ACTIVE' || u.status === 'PENDING_APPROVAL') && u.role !== 'ADMIN' && (
                    <ReasonAction user={u} action="suspend" label="Suspend" onDone={onDone} />
                  )}
                  {u.status === 'SUSPENDED' && (
                    <button
                      type="button"
                      onClick={() => act.mutate({ user: u, action: 'reactivate' })}
                      aria-label={`Reactivate ${name(u)}`}
                    >
                      Reactivate
                    </button>
                  )}
                  {(u.status === 'PENDING_APPROVAL' || u.status === 'REJECTED') && (
                    <button
                      type="button"
                      onClick={() => act.mutate({ user: u, action: 'approve' })}
                      aria-label={`Approve ${name(u)}`}
                    >
                      Approve
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager next={users.data?.nextCursor} cursors={cursors} setCursors={setCursors} />
    </>
  );
}
