// The sign-in form (password, then the SMS code) and the registration form (the phone's code, then
// the details) that the console and the apps share. Each app wraps them in its own page (heading,
// links) and adds the fields of its role; the labels ("Email or phone", "Password", "Verification
// code", "Sign in", "Verify", …) are the same everywhere.
import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent, type ReactNode } from 'react';
import { api, ok } from './api/client';
import type { paths } from './api/schema';
import { session } from './api/session';
import { CountryField, useCountries } from './countries';
import { BusyButton, ErrorBox, Field, Notice } from './ui';

type RegisterBody = paths['/api/auth/register']['post']['requestBody']['content']['application/json'];
type Registered = paths['/api/auth/register']['post']['responses'][201]['content']['application/json'];

/** `big`: the apps' full-width touch buttons; the console's buttons sit side by side. */
function Buttons({ big, children }: { big?: boolean; children: ReactNode }) {
  return big ? <>{children}</> : <div className="actions">{children}</div>;
}

const CODE_FIELD = {
  label: 'Verification code',
  inputMode: 'numeric',
  autoComplete: 'one-time-code',
  pattern: '[0-9]{6}',
  maxLength: 6,
  required: true,
} as const;

/**
 * Password, then the SMS code. `rememberMe`: an installed app is opened many times a day; the longer
 * refresh lifetime spares the SMS.
 */
export function SignInForm({
  big,
  rememberMe,
  onSignedIn,
}: {
  big?: boolean;
  rememberMe?: boolean;
  onSignedIn?: () => void;
}) {
  const [identifier, setIdentifier] = useState('');
  const [password, setPassword] = useState('');
  const [step, setStep] = useState<{ sessionId: string; phone: string; message: string } | undefined>();
  const [code, setCode] = useState('');
  const [resent, setResent] = useState('');
  const button = big ? 'big' : undefined;

  const login = useMutation({
    mutationFn: () =>
      ok(api.POST('/api/auth/login', { body: { identifier, password, ...(rememberMe ? { rememberMe } : {}) } })),
    onSuccess: setStep,
  });
  const verify = useMutation({
    mutationFn: () =>
      ok(api.POST('/api/auth/login/verify-otp', { body: { sessionId: step!.sessionId, phone: step!.phone, code } })),
    onSuccess: (data) => {
      session.signedIn(data);
      onSignedIn?.();
    },
  });
  const resend = useMutation({
    mutationFn: () =>
      ok(api.POST('/api/auth/login/send-otp', { body: { sessionId: step!.sessionId, phone: step!.phone } })),
    onSuccess: (data) => setResent(data.message),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (step) verify.mutate();
    else login.mutate();
  };

  return !step ? (
    <form onSubmit={submit} aria-label="Sign in">
      <Field
        label="Email or phone"
        name="identifier"
        autoComplete="username"
        required
        maxLength={254}
        value={identifier}
        onChange={(e) => setIdentifier(e.target.value)}
      />
      <Field
        label="Password"
        name="password"
        type="password"
        autoComplete="current-password"
        required
        maxLength={1024}
        value={password}
        onChange={(e) => setPassword(e.target.value)}
      />
      <ErrorBox error={login.error} />
      <BusyButton type="submit" className={button} busy={login.isPending}>
        Sign in
      </BusyButton>
    </form>
  ) : (
    <form onSubmit={submit} aria-label="Verification">
      <Notice>{step.message}</Notice>
      <Field {...CODE_FIELD} name="code" autoFocus value={code} onChange={(e) => setCode(e.target.value.trim())} />
      <ErrorBox error={verify.error ?? resend.error} />
      {resent && <Notice>{resent}</Notice>}
      <Buttons big={big}>
        <BusyButton type="submit" className={button} busy={verify.isPending}>
          Verify
        </BusyButton>
        <BusyButton
          type="button"
          className={big ? 'secondary big' : 'secondary'}
          onClick={() => resend.mutate()}
          busy={resend.isPending}
        >
          Send the code again
        </BusyButton>
      </Buttons>
    </form>
  );
}

/** What every registration sends; the role's own fields come from `body`. */
export type CommonRegistration = Pick<
  RegisterBody,
  'sessionId' | 'phone' | 'code' | 'email' | 'password' | 'firstName' | 'lastName' | 'countryId'
>;

/**
 * The phone (a code goes to it), then the code, names, e-mail, password and country. `phoneFields`
 * stand before the phone (the console's account type), `before`/`after` around the common details
 * (a business's name, a driver's vehicle); `body` turns the common details into the request.
 * `done` replaces the form once the account exists.
 */
export function RegisterForm({
  big,
  phoneFields,
  before,
  after,
  body,
  submitLabel = 'Register',
  onRegistered,
  done,
}: {
  big?: boolean;
  phoneFields?: ReactNode;
  before?: ReactNode;
  after?: ReactNode;
  body: (common: CommonRegistration, countries: { id: string }[]) => RegisterBody;
  submitLabel?: string;
  onRegistered?: (data: Registered) => void;
  done: (data: Registered) => ReactNode;
}) {
  const countries = useCountries();
  const [phone, setPhone] = useState('');
  const [otp, setOtp] = useState<{ sessionId: string; phone: string; message: string } | undefined>();
  const [form, setForm] = useState({ code: '', firstName: '', lastName: '', email: '', password: '', countryId: '' });
  const set = (key: keyof typeof form) => (e: { target: { value: string } }) =>
    setForm({ ...form, [key]: e.target.value });
  const button = big ? 'big' : undefined;

  const sendOtp = useMutation({
    mutationFn: () => ok(api.POST('/api/auth/register/send-otp', { body: { phone } })),
    onSuccess: setOtp,
  });
  const register = useMutation({
    mutationFn: () =>
      ok(
        api.POST('/api/auth/register', {
          body: body({ sessionId: otp!.sessionId, phone: otp!.phone, ...form }, countries.data?.items ?? []),
        }),
      ),
    onSuccess: onRegistered,
  });

  if (register.isSuccess) return <>{done(register.data)}</>;
  return !otp ? (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        sendOtp.mutate();
      }}
    >
      {phoneFields}
      <Field
        label="Phone"
        type="tel"
        autoComplete="tel"
        required
        maxLength={32}
        placeholder="+254712345678"
        value={phone}
        onChange={(e) => setPhone(e.target.value.trim())}
        hint="In international format; we send a code to it"
      />
      <ErrorBox error={sendOtp.error} />
      <BusyButton type="submit" className={button} busy={sendOtp.isPending}>
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
      <Field {...CODE_FIELD} value={form.code} onChange={set('code')} />
      {before}
      <Field
        label="First name"
        autoComplete="given-name"
        required
        maxLength={100}
        value={form.firstName}
        onChange={set('firstName')}
      />
      <Field
        label="Last name"
        autoComplete="family-name"
        required
        maxLength={100}
        value={form.lastName}
        onChange={set('lastName')}
      />
      <Field
        label="Email"
        type="email"
        autoComplete="email"
        required
        maxLength={254}
        value={form.email}
        onChange={set('email')}
      />
      <Field
        label="Password"
        type="password"
        autoComplete="new-password"
        required
        minLength={8}
        maxLength={128}
        value={form.password}
        onChange={set('password')}
        hint="8 to 128 characters"
      />
      <CountryField
        countries={countries.data?.items}
        value={form.countryId}
        onChange={(countryId) => setForm({ ...form, countryId })}
      />
      {after}
      <ErrorBox error={register.error ?? countries.error} />
      <BusyButton type="submit" className={button} busy={register.isPending}>
        {submitLabel}
      </BusyButton>
    </form>
  );
}
