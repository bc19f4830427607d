// Sign in (password, then the SMS code), forgot password, and registering a business or a company.
import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { api, ok } from '../../shared/api/client';
import { RegisterForm, SignInForm } from '../../shared/auth';
import { BusyButton, ErrorBox, Field, Notice, PageTitle } from '../../shared/ui';
import { Link, navigate } from '../router';

function PublicShell({ children }: { children: React.ReactNode }) {
  return (
    <>
      <header className="topbar">
        <span className="brand">Delivery console</span>
      </header>
      <main id="main" className="narrow">
        {children}
      </main>
    </>
  );
}

export function SignInPage() {
  return (
    <PublicShell>
      <PageTitle>Sign in</PageTitle>
      <SignInForm onSignedIn={() => navigate('/', { replace: true })} />
      <p>
        <Link to="/forgot-password">Forgot password?</Link> · <Link to="/register">Register a business or company</Link>
      </p>
    </PublicShell>
  );
}

export function ForgotPasswordPage() {
  const [identifier, setIdentifier] = useState('');
  const [step, setStep] = useState<{ sessionId: string; phone: string; message: string } | undefined>();
  const [code, setCode] = useState('');
  const [newPassword, setNewPassword] = useState('');
  const forgot = useMutation({
    mutationFn: () => ok(api.POST('/api/auth/password/forgot', { body: { identifier } })),
    onSuccess: setStep,
  });
  const reset = useMutation({
    mutationFn: () =>
      ok(
        api.POST('/api/auth/password/reset', {
          body: { sessionId: step!.sessionId, phone: step!.phone, code, newPassword },
        }),
      ),
  });
  return (
    <PublicShell>
      <PageTitle>Reset your password</PageTitle>
      {reset.isSuccess ? (
        <>
          <Notice>{reset.data.message}</Notice>
          <p>
            <Link to="/login">Sign in</Link>
          </p>
        </>
      ) : !step ? (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            forgot.mutate();
          }}
        >
          <Field
            label="Email or phone"
            required
            maxLength={254}
            value={identifier}
            onChange={(e) => setIdentifier(e.target.value)}
          />
          <ErrorBox error={forgot.error} />
          <BusyButton type="submit" busy={forgot.isPending}>
            Send reset code
          </BusyButton>
        </form>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            reset.mutate();
          }}
        >
          <Notice>{step.message}</Notice>
          <Field
            label="Verification code"
            inputMode="numeric"
            autoComplete="one-time-code"
            pattern="[0-9]{6}"
            maxLength={6}
            required
            value={code}
            onChange={(e) => setCode(e.target.value.trim())}
          />
          <Field
            label="New password"
            type="password"
            autoComplete="new-password"
            minLength={8}
            maxLength={128}
            required
            value={newPassword}
            onChange={(e) => setNewPassword(e.target.value)}
            hint="8 to 128 characters"
          />
          <ErrorBox error={reset.error} />
          <BusyButton type="submit" busy={reset.isPending}>
            Set new password
          </BusyButton>
        </form>
      )}
      <p>
        <Link to="/login">Back to sign in</Link>
      </p>
    </PublicShell>
  );
}

export function RegisterPage() {
  const [role, setRole] = useState<'BUSINESS' | 'COMPANY'>('BUSINESS');
  const [name, setName] = useState('');
  const [address, setAddress] = useState('');

  return (
    <PublicShell>
      <PageTitle>Register a business or company</PageTitle>
      <RegisterForm
        phoneFields={
          <fieldset>
            <legend>Account type</legend>
            <label className="inline">
              <input type="radio" name="role" checked={role === 'BUSINESS'} onChange={() => setRole('BUSINESS')} />{' '}
              Business
            </label>
            <label className="inline">
              <input type="radio" name="role" checked={role === 'COMPANY'} onChange={() => setRole('COMPANY')} />{' '}
              Company (drivers)
            </label>
          </fieldset>
        }
        before={
          <>
            <Field
              label={role === 'BUSINESS' ? 'Business name' : 'Company name'}
              required
              maxLength={200}
              value={name}
              onChange={(e) => setName(e.target.value)}
            />
            {role === 'BUSINESS' && (
              <Field
                label="Business address"
                maxLength={500}
                value={address}
                onChange={(e) => setAddress(e.target.value)}
              />
            )}
          </>
        }
        body={(common, countries) => ({
          ...common,
          countryId: common.countryId || countries[0]?.id || '',
          role,
          ...(role === 'BUSINESS'
            ? { businessName: name, ...(address ? { businessAddress: address } : {}) }
            : { companyName: name }),
        })}
        done={(data) => (
          <>
            <Notice>{data.message}</Notice>
            <p>An administrator reviews new accounts; you will get an SMS once yours is approved.</p>
            <p>
              <Link to="/login">Sign in</Link>
            </p>
          </>
        )}
      />
      <p>
        <Link to="/login">Back to sign in</Link>
      </p>
    </PublicShell>
  );
}
