// Traccar Client set-up (contract section 19): a phone's browser stops sending positions when the app
// is in the background, Traccar Client does not. The driver makes a device key here (shown once), reads
// the server URL and the key as text or as QR codes (the qrcode library is loaded when first needed),
// and lists and revokes its keys.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { api, ok } from '../shared/api/client';
import { driverKeys } from '../shared/query-keys';
import { BusyButton, ErrorBox, Field, formatTime } from '../shared/ui';
import { Title } from './ui';

/** The URL Traccar Client sends to: its "Server URL" setting. */
export const osmandUrl = () => `${window.location.origin}/api/positions/osmand`;

function QrCode({ text, label }: { text: string; label: string }) {
  const ref = useRef<HTMLCanvasElement>(null);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    let gone = false;
    import('qrcode')
      .then((qr) => {
        if (!gone && ref.current)
          return qr.toCanvas(ref.current, text, { width: 220, margin: 2, errorCorrectionLevel: 'M' });
      })
      .catch(() => !gone && setFailed(true));
    return () => {
      gone = true;
    };
  }, [text]);
  if (failed) return <p className="muted">The QR code could not be drawn: type the text above instead.</p>;
  return <canvas ref={ref} className="qr" role="img" aria-label={label} width={220} height={220} />;
}

export function TraccarSetup() {
  const qc = useQueryClient();
  const [name, setName] = useState('');
  const [made, setMade] = useState<{ id: string; name: string; key: string }>();
  const keys = useQuery({ queryKey: driverKeys.deviceKeys, queryFn: () => ok(api.GET('/api/drivers/me/device-keys')) });
  const create = useMutation({
    mutationFn: () => ok(api.POST('/api/drivers/me/device-keys', { body: name.trim() ? { name: name.trim() } : {} })),
    onSuccess: (key) => {
      setMade(key);
      setName('');
      void qc.invalidateQueries({ queryKey: driverKeys.deviceKeys });
    },
  });
  const revoke = useMutation({
    mutationFn: (id: string) => ok(api.DELETE('/api/drivers/me/device-keys/{id}', { params: { path: { id } } })),
    onSuccess: (_, id) => {
      if (made?.id === id) setMade(undefined);
      void qc.invalidateQueries({ queryKey: driverKeys.deviceKeys });
    },
  });
  const url = osmandUrl();
  const items = keys.data?.items ?? [];

  return (
    <>
      <Title>Traccar Client</Title>
      <p>
        This app stops sending your position when the phone shows another app or its screen is off.{' '}
        <strong>Traccar Client</strong> (free, for Android and iPhone) keeps sending it in the background.
      </p>
      <ol className="setup-steps">
        <li>Install Traccar Client from your phone’s app store.</li>
        <li>Make a device key below. It is shown once: copy it or scan it now.</li>
        <li>
          In Traccar Client, set <strong>Server URL</strong> and <strong>Device identifier</strong> to the values shown,
          location accuracy to high, and turn on <strong>Service status</strong>.
        </li>
        <li>Go online here as usual: offers and jobs stay in this app.</li>
      </ol>

      {made ? (
        <section className="card" aria-label="New device key">
          <h2>Key “{made.name}”</h2>
          <p className="muted">Shown only now. Revoke it and make another if it is lost.</p>
          <dl className="details">
            <dt>Server URL</dt>
            <dd className="mono">{url}</dd>
            <dt>Device identifier</dt>
            <dd className="mono">{made.key}</dd>
          </dl>
          <div className="qr-codes">
            <figure>
              <QrCode text={url} label="QR code of the server URL" />
              <figcaption>Server URL</figcaption>
            </figure>
            <figure>
              <QrCode text={made.key} label="QR code of the device identifier" />
              <figcaption>Device identifier</figcaption>
            </figure>
          </div>
          <button type="button" className="big secondary" onClick={() => setMade(undefined)}>
            Done
          </button>
        </section>
      ) : (
        <form
          className="card"
          aria-label="Make a device key"
          onSubmit={(e) => {
            e.preventDefault();
            create.mutate();
          }}
        >
          <Field
            label="Device name"
            maxLength={60}
            value={name}
            onChange={(e) => setName(e.target.value)}
            hint="Optional, e.g. “My Android phone”"
          />
          <ErrorBox error={create.error} />
          <BusyButton type="submit" className="big" busy={create.isPending} disabled={items.length >= 3}>
            Make a device key
          </BusyButton>
          {items.length >= 3 && <p className="muted">You have 3 keys, the most allowed: revoke one to make another.</p>}
        </form>
      )}

      <h2>Your device keys</h2>
      <ErrorBox error={keys.error ?? revoke.error} />
      {keys.data && items.length === 0 && <p>No device keys yet.</p>}
      <ul className="past">
        {items.map((k) => (
          <li key={k.id} className="card">
            <p>
              <strong>{k.name}</strong>
            </p>
            <p className="muted">
              Made {formatTime(k.createdAt)} ·{' '}
              {k.lastUsedAt ? `last position ${formatTime(k.lastUsedAt)}` : 'not used yet'}
            </p>
            <BusyButton
              type="button"
              className="big secondary danger-text"
              busy={revoke.isPending && revoke.variables === k.id}
              onClick={() => revoke.mutate(k.id)}
              aria-label={`Revoke ${k.name}`}
            >
              Revoke
            </BusyButton>
          </li>
        ))}
      </ul>
    </>
  );
}
