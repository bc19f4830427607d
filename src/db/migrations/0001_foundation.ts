// Countries, users and their role profiles, and authenticated sessions.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table countries (
      id uuid primary key,
      code char(2) not null unique,
      name text not null,
      currency char(3) not null,
      dial_code text not null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );

    create table users (
      id uuid primary key,
      email text not null,
      phone text not null unique,
      password_hash text not null,
      first_name text not null,
      last_name text not null,
      role text not null check (role in ('CUSTOMER', 'DRIVER', 'BUSINESS', 'COMPANY', 'ADMIN')),
      status text not null check (status in ('ACTIVE', 'PENDING_APPROVAL', 'REJECTED', 'SUSPENDED')),
      status_reason text,
      country_id uuid references countries(id),
      is_email_verified boolean not null default false,
      is_phone_verified boolean not null default false,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create unique index users_email_lower_idx on users (lower(email));
    create index users_role_status_idx on users (role, status, created_at desc, id desc);

    create table business_profiles (
      user_id uuid primary key references users(id) on delete cascade,
      business_name text not null,
      business_address text,
      updated_at timestamptz not null default now()
    );

    create table company_profiles (
      user_id uuid primary key references users(id) on delete cascade,
      company_name text not null,
      updated_at timestamptz not null default now()
    );

    create table driver_profiles (
      user_id uuid primary key references users(id) on delete cascade,
      vehicle_type text not null check (vehicle_type in ('BIKE', 'CAR', 'VAN', 'TRUCK')),
      vehicle_plate text not null,
      company_id uuid references users(id),
      service_types text[] not null default array['RIDE', 'PACKAGE_DELIVERY'],
      availability text not null default 'OFFLINE' check (availability in ('ONLINE', 'OFFLINE')),
      rating double precision,
      last_lat double precision,
      last_lng double precision,
      last_heading double precision,
      last_speed double precision,
      last_location_at timestamptz,
      -- The one job a driver is on (set when it accepts or is assigned, cleared when the job ends):
      -- a conditional update on it is what stops a driver from taking two jobs at once.
      active_job_type text check (active_job_type in ('PACKAGE', 'RIDE')),
      active_job_id uuid,
      updated_at timestamptz not null default now()
    );
    create index driver_profiles_company_idx on driver_profiles (company_id);

    -- One row per login: the refresh token (hashed) and the id (sid) carried by its access tokens.
    create table auth_sessions (
      id uuid primary key,
      user_id uuid not null references users(id) on delete cascade,
      refresh_token_hash text not null unique,
      remember_me boolean not null default false,
      expires_at timestamptz not null,
      revoked_at timestamptz,
      created_at timestamptz not null default now(),
      last_used_at timestamptz
    );
    create index auth_sessions_user_idx on auth_sessions (user_id);
  `.execute(db);

  const countries: [string, string, string, string][] = [
    ['KE', 'Kenya', 'KES', '+254'],
    ['NG', 'Nigeria', 'NGN', '+234'],
    ['GH', 'Ghana', 'GHS', '+233'],
    ['UG', 'Uganda', 'UGX', '+256'],
    ['TZ', 'Tanzania', 'TZS', '+255'],
    ['RW', 'Rwanda', 'RWF', '+250'],
    ['ZA', 'South Africa', 'ZAR', '+27'],
    ['EG', 'Egypt', 'EGP', '+20'],
    ['ET', 'Ethiopia', 'ETB', '+251'],
    ['MA', 'Morocco', 'MAD', '+212'],
    ['SN', 'Senegal', 'XOF', '+221'],
    ['CI', "Côte d'Ivoire", 'XOF', '+225'],
    ['GB', 'United Kingdom', 'GBP', '+44'],
    ['US', 'United States', 'USD', '+1'],
    ['FR', 'France', 'EUR', '+33'],
    ['DE', 'Germany', 'EUR', '+49'],
    ['IN', 'India', 'INR', '+91'],
    ['AE', 'United Arab Emirates', 'AED', '+971'],
  ];
  for (const [code, name, currency, dialCode] of countries) {
    await sql`insert into countries (id, code, name, currency, dial_code)
      values (gen_random_uuid(), ${code}, ${name}, ${currency}, ${dialCode})`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table auth_sessions, driver_profiles, company_profiles, business_profiles, users, countries`.execute(
    db,
  );
}
