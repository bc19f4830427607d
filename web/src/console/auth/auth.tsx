// Sign in (password, then the SMS code), forgot password, and registering a business or a company.
import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, ok } from '../../shared/api/client';
import { session } from '../../shared/api/session';
import { useCountries } from '../../shared/countries';
import { BusyButton, ErrorBox, Field, Notice, PageTitle, SelectField } from '../../shared/ui';
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
  const [identifier, setIdentifier] = useState('');
  const [password, setPassword] = useState('');
  const [step, setStep] = useState<{ sessionId: string; phone: string; message: string } | undefined>();
  const [code, setCode] = useState('');
  const [resent, setResent] = useState('');

  const login = useMutation({
    mutationFn: () => ok(api.POST('/api/auth/login', { body: { identifier, password } })),
    onSuccess: (data) => setStep(data),
  });
  const verify = useMutation({
    mutationFn: () => ok(api.POST('/api/auth/login/verify-otp', { body: { sessionId: step!.sessionId, phone: step!.phone, code } })),
    onSuccess: (data) => {
      session.signedIn(data);
      navigate('/', { replace: true });
    },
  });
  const resend = useMutation({
    mutationFn: () => ok(api.POST('/api/auth/login/send-otp', { body: { sessionId: step!.sessionId, phone: step!.phone } })),
    onSuccess: (data) => setResent(data.message),
  });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (step) verify.mutate();
    else login.mutate();
  };

  return (
    <PublicShell>
      <PageTitle>Sign in</PageTitle>
      {!step ? (
        <form onSubmit={submit} aria-label="Sign in">
          <Field label="Email or phone" name="identifier" autoComplete="username" required maxLength={254} value={identifier} onChange={(e) => setIdentifier(e.target.value)} />
          <Field label="Password" name="password" type="password" autoComplete="current-password" required maxLength={1024} value={password} onChange={(e) => setPassword(e.target.value)} />
          <ErrorBox error={login.error} />
          <BusyButton type="submit" busy={login.isPending}>
            Sign in
          </BusyButton>
        </form>
      ) : (
        <form onSubmit={submit} aria-label="Verification">
          <Notice>{step.message}</Notice>
          <Field
            label="Verification code"
            name="code"
            inputMode="numeric"
            autoComplete="one-time-code"
            pattern="[0-9]{6}"
            maxLength={6}
            required
            autoFocus
            value={code}
            onChange={(e) => setCode(e.target.value.trim())}
          />
          <ErrorBox error={verify.error ?? resend.error} />
          {resent && <Notice>{resent}</Notice>}
          <div className="actions">
            <BusyButton type="submit" busy={verify.isPending}>
              Verify
            </BusyButton>
            <BusyButton type="button" className="secondary" onClick={() => resend.mutate()} busy={resend.isPending}>
              Send the code again
            </BusyButton>
          </div>
        </form>
      )}
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
    mutationFn: () => ok(api.POST('/api/auth/password/reset', { body: { sessionId: step!.sessionId, phone: step!.phone, code, newPassword } })),
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
          <Field label="Email or phone" required maxLength={254} value={identifier} onChange={(e) => setIdentifier(e.target.value)} />
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
          <Field label="Verification code" inputMode="numeric" autoComplete="one-time-code" pattern="[0-9]{6}" maxLength={6} required value={code} onChange={(e) => setCode(e.target.value.trim())} />
          <Field label="New password" type="password" autoComplete="new-password" minLength={8} maxLength={128} required value={newPassword} onChange={(e) => setNewPassword(e.target.value)} hint="8 to 128 characters" />
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
  const countries = useCountries();
  const [role, setRole] = useState<'BUSINESS' | 'COMPANY'>('BUSINESS');
  const [phone, setPhone] = useState('');
  const [otp, setOtp] = useState<{ sessionId: string; phone: string; message: string } | undefined>();
  const [form, setForm] = useState({ code: '', email: '', password: '', firstName: '', lastName: '', countryId: '', name: '', address: '' });
  const set = (key: keyof typeof form) => (e: { target: { value: string } }) => setForm({ ...form, [key]: e.target.value });

  const sendOtp = useMutation({ mutationFn: () => ok(api.POST('/api/auth/register/send-otp', { body: { phone } })), onSuccess: setOtp });
  const register = useMutation({
    mutationFn: () =>
      ok(
        api.POST('/api/auth/register', {
          body: {
            sessionId: otp!.sessionId,
            phone: otp!.phone,
            code: form.code,
            email: form.email,
            password: form.password,
            firstName: form.firstName,
            lastName: form.lastName,
            countryId: form.countryId || countries.data?.items[0]?.id || '',
            role,
            ...(role === 'BUSINESS' ? { businessName: form.name, ...(form.address ? { businessAddress: form.address } : {}) } : { companyName: form.name }),
          },
        }),
      ),
  });

  return (
    <PublicShell>
      <PageTitle>Register a business or company</PageTitle>
      {register.isSuccess ? (
        <>
          <Notice>{register.data.message}</Notice>
          <p>An administrator reviews new accounts; you will get an SMS once yours is approved.</p>
          <p>
            <Link to="/login">Sign in</Link>
          </p>
        </>
      ) : !otp ? (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            sendOtp.mutate();
          }}
        >
          <fieldset>
            <legend>Account type</legend>
            <label className="inline">
              <input type="radio" name="role" checked={role === 'BUSINESS'} onChange={() => setRole('BUSINESS')} /> Business
            </label>
            <label className="inline">
              <input type="radio" name="role" checked={role === 'COMPANY'} onChange={() => setRole('COMPANY')} /> Company (drivers)
            </label>
          </fieldset>
          <Field label="Phone" type="tel" autoComplete="tel" required maxLength={32} placeholder="+254712345678" value={phone} onChange={(e) => setPhone(e.target.value.trim())} hint="In international format; we send a code to it" />
          <ErrorBox error={sendOtp.error} />
          <BusyButton type="submit" busy={sendOtp.isPending}>
            Send code
          </BusyButton>
        </form>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            register.mutate();
          }}
        >
          <Notice>{otp.message}</Notice>
          <Field label="Verification code" inputMode="numeric" autoComplete="one-time-code" pattern="[0-9]{6}" maxLength={6} required value={form.code} onChange={set('code')} />
          <Field label={role === 'BUSINESS' ? 'Business name' : 'Company name'} required maxLength={200} value={form.name} onChange={set('name')} />
          {role === 'BUSINESS' && <Field label="Business address" maxLength={500} value={form.address} onChange={set('address')} />}
          <Field label="First name" autoComplete="given-name" required maxLength={100} value={form.firstName} onChange={set('firstName')} />
          <Field label="Last name" autoComplete="family-name" required maxLength={100} value={form.lastName} onChange={set('lastName')} />
          <Field label="Email" type="email" autoComplete="email" required maxLength={254} value={form.email} onChange={set('email')} />
          <Field label="Password" type="password" autoComplete="new-password" required minLength={8} maxLength={128} value={form.password} onChange={set('password')} hint="8 to 128 characters" />
          <SelectField label="Country" required value={form.countryId} onChange={set('countryId')}>
            <option value="">Choose…</option>
            {countries.data?.items.map((c) => (
              <option key={c.id} value={c.id}>
                {c.name}
              </option>
            ))}
          </SelectField>
          <ErrorBox error={register.error ?? countries.error} />
          <BusyButton type="submit" busy={register.isPending}>
            Register
          </BusyButton>
        </form>
      )}
      <p>
        <Link to="/login">Back to sign in</Link>
      </p>
    </PublicShell>
  );
}
