// Sign in (password, then the SMS code) and registering as a driver (the phone's code, then the
// details), which ends in "waiting for approval".
import { useState, type ReactNode } from 'react';
import { PublicShell as SharedShell } from '../shared/app-shell';
import { RegisterForm, SignInForm } from '../shared/auth';
import { Field, Notice, SelectField, VEHICLE_TYPES } from '../shared/ui';
import { Title } from './ui';

export function PublicShell({ children }: { children: ReactNode }) {
  return <SharedShell brand="Driver">{children}</SharedShell>;
}

export function SignIn({ onRegister }: { onRegister: () => void }) {
  return (
    <PublicShell>
      <Title>Sign in</Title>
      <SignInForm big rememberMe />
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
  const [vehicle, setVehicle] = useState({ vehicleType: '', vehiclePlate: '', companyId: '' });
  const set = (key: keyof typeof vehicle) => (e: { target: { value: string } }) =>
    setVehicle({ ...vehicle, [key]: e.target.value });
  const [registered, setRegistered] = useState(false);

  return (
    <PublicShell>
      {!registered && <Title>Register as a driver</Title>}
      <RegisterForm
        big
        onRegistered={() => setRegistered(true)}
        after={
          <>
            <SelectField label="Vehicle type" required value={vehicle.vehicleType} onChange={set('vehicleType')}>
              <option value="">Choose…</option>
              {VEHICLE_TYPES.map((v) => (
                <option key={v} value={v}>
                  {v.charAt(0) + v.slice(1).toLowerCase()}
                </option>
              ))}
            </SelectField>
            <Field
              label="Plate"
              required
              maxLength={20}
              autoCapitalize="characters"
              value={vehicle.vehiclePlate}
              onChange={set('vehiclePlate')}
            />
            <Field
              label="Company ID (optional)"
              maxLength={36}
              value={vehicle.companyId}
              onChange={set('companyId')}
              hint="Only if you drive for a company: the ID it gave you"
            />
          </>
        }
        body={(common) => ({
          ...common,
          role: 'DRIVER',
          vehicleType: vehicle.vehicleType as (typeof VEHICLE_TYPES)[number],
          vehiclePlate: vehicle.vehiclePlate.trim(),
          ...(vehicle.companyId.trim() ? { companyId: vehicle.companyId.trim() } : {}),
        })}
        done={(data) => (
          <>
            <Title>Waiting for approval</Title>
            <Notice>{data.message}</Notice>
            <p>
              An administrator checks new drivers. You will get an SMS once your account is approved; then sign in here.
            </p>
            <button type="button" className="big" onClick={onSignIn}>
              Sign in
            </button>
          </>
        )}
      />
      {!registered && (
        <p className="center">
          <button type="button" className="link" onClick={onSignIn}>
            Back to sign in
          </button>
        </p>
      )}
    </PublicShell>
  );
}
