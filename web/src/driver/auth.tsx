// Sign in (password, then the SMS code) and registering as a driver (the phone's code, then the
// details), which ends in "waiting for approval".
import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent, type ReactNode } from 'react';
import { api, ok } from '../shared/api/client';
import { session } from '../shared/api/session';
import { useCountries } from '../shared/countries';
import { BusyButton, ErrorBox, Field, Notice, SelectField, VEHICLE_TYPES } from '../shared/ui';
import { Title } from './ui';

export function PublicShell({ children }: { children: ReactNode }) {
  return (
    <>
      <header className="topbar">
        <span className="brand">Driver</span>
      </header>
      <main id="main">{children}</main>
    </>
  );
}

export function SignIn({ onRegister }: { onRegister: () => void }) {
  const [identifier, setIdentifier] = useState('');
  const [password, setPassword] = useState('');
  const [step, setStep] = useState<{ sessionId: string; phone: string; message: string } | undefined>();
  const [code, setCode] = useState('');
  const [resent, setResent] = useState('');

  // rememberMe: an installed app is opened many times a day; the longer refresh lifetime spares the SMS.
  const login = useMutation({ mutationFn: () => ok(api.POST('/api/auth/login', { body: { identifier, password, rememberMe: true } })), onSuccess: setStep });
  const verify = useMutation({
    mutationFn: () => ok(api.POST('/api/auth/login/verify-otp', { body: { sessionId: step!.sessionId, phone: step!.phone, code } })),
    onSuccess: (data) => session.signedIn(data),
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
      <Title>Sign in</Title>
      {!step ? (
        <form onSubmit={submit} aria-label="Sign in">
          <Field label="Email or phone" name="identifier" autoComplete="username" required maxLength={254} value={identifier} onChange={(e) => setIdentifier(e.target.value)} />
          <Field label="Password" name="password" type="password" autoComplete="current-password" required maxLength={1024} value={password} onChange={(e) => setPassword(e.target.value)} />
          <ErrorBox error={login.error} />
          <BusyButton type="submit" className="big" busy={login.isPending}>
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
          <BusyButton type="submit" className="big" busy={verify.isPending}>
            Verify
          </BusyButton>
          <BusyButton type="button" className="secondary big" onClick={() => resend.mutate()} busy={resend.isPending}>
            Send the code again
          </BusyButton>
        </form>
      )}
      <p className="center">
        New driver?{' '}
        <button type="button" className="link" onClick={onRegister}>
          Register as a driver
        </button>
      </p>
    </PublicShell>
  );
}

export function Register({ onSignIn }: { onSignIn: () => void }) {
  const countries = useCountries();
  const [phone, setPhone] = useState('');
  const [otp, setOtp] = useState<{ sessionId: string; phone: string; message: string } | undefined>();
  const [form, setForm] = useState({ code: '', firstName: '', lastName: '', email: '', password: '', countryId: '', vehicleType: '', vehiclePlate: '', companyId: '' });
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
            countryId: form.countryId,
            role: 'DRIVER',
            vehicleType: form.vehicleType as (typeof VEHICLE_TYPES)[number],
            vehiclePlate: form.vehiclePlate.trim(),
            ...(form.companyId.trim() ? { companyId: form.companyId.trim() } : {}),
          },
        }),
      ),
  });

  return (
    <PublicShell>
      {register.isSuccess ? (
        <>
          <Title>Waiting for approval</Title>
          <Notice>{register.data.message}</Notice>
          <p>An administrator checks new drivers. You will get an SMS once your account is approved; then sign in here.</p>
          <button type="button" className="big" onClick={onSignIn}>
            Sign in
          </button>
        </>
      ) : (
        <>
          <Title>Register as a driver</Title>
          {!otp ? (
            <form
              onSubmit={(e) => {
                e.preventDefault();
                sendOtp.mutate();
              }}
            >
              <Field label="Phone" type="tel" autoComplete="tel" required maxLength={32} placeholder="+254712345678" value={phone} onChange={(e) => setPhone(e.target.value.trim())} hint="In international format; we send a code to it" />
              <ErrorBox error={sendOtp.error} />
              <BusyButton type="submit" className="big" busy={sendOtp.isPending}>
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
              <SelectField label="Vehicle type" required value={form.vehicleType} onChange={set('vehicleType')}>
                <option value="">Choose…</option>
                {VEHICLE_TYPES.map((v) => (
                  <option key={v} value={v}>
                    {v.charAt(0) + v.slice(1).toLowerCase()}
                  </option>
                ))}
              </SelectField>
              <Field label="Plate" required maxLength={20} autoCapitalize="characters" value={form.vehiclePlate} onChange={set('vehiclePlate')} />
              <Field label="Company ID (optional)" maxLength={36} value={form.companyId} onChange={set('companyId')} hint="Only if you drive for a company: the ID it gave you" />
              <ErrorBox error={register.error ?? countries.error} />
              <BusyButton type="submit" className="big" busy={register.isPending}>
                Register
              </BusyButton>
            </form>
          )}
          <p className="center">
            <button type="button" className="link" onClick={onSignIn}>
              Back to sign in
            </button>
          </p>
        </>
      )}
    </PublicShell>
  );
}
