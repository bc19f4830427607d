// Proof of delivery in the driver app (contract section 19): "Take photo" (the phone's camera
// through a file input), "Sign here" (a canvas the recipient signs with a finger: pointer events,
// with Clear), uploaded as multipart/form-data to POST /packages/:id/proof before "Delivered".
import { useCallback, useEffect, useRef, useState, type PointerEvent } from 'react';
import { fetchWithSession } from '../shared/api/client';
import type { Package } from './types';

export interface ProofDraft {
  photo: File | undefined;
  /** Whether the canvas holds a signature. */
  signed: boolean;
}

export interface ProofCaptureHandle {
  signature(): Promise<Blob | undefined>;
}

/** The longest side of the photo sent (the server keeps at most the same). */
const MAX_SIDE = 1600;

/**
 * The photo scaled on the phone to at most 1600 px (canvas, JPEG) before upload: a camera's 12 MP
 * file is a slow upload on mobile data, and the server would scale it down anyway. The original is
 * sent when the browser cannot decode or encode it, or when it is small enough already.
 */
async function scaledPhoto(file: File): Promise<File> {
  try {
    if (typeof createImageBitmap !== 'function') return file;
    const bitmap = await createImageBitmap(file, { imageOrientation: 'from-image' });
    try {
      const scale = Math.min(1, MAX_SIDE / Math.max(bitmap.width, bitmap.height));
      if (scale === 1) return file;
      const canvas = document.createElement('canvas');
      canvas.width = Math.max(1, Math.round(bitmap.width * scale));
      canvas.height = Math.max(1, Math.round(bitmap.height * scale));
      const context = canvas.getContext('2d');
      if (!context) return file;
      context.drawImage(bitmap, 0, 0, canvas.width, canvas.height);
      const blob = await new Promise<Blob | null>((resolve) => canvas.toBlob(resolve, 'image/jpeg', 0.85));
      if (!blob || blob.type !== 'image/jpeg') return file;
      return new File([blob], `${(file.name || 'photo').replace(/\.[^.]*$/, '')}.jpg`, { type: 'image/jpeg' });
    } finally {
      bitmap.close();
    }
  } catch {
    return file;
  }
}

/** Sends what was captured; the server's package (with its `proof`) is the answer. */
export async function uploadProof(
  packageId: string,
  proof: { photo?: File; signature?: Blob; recipientName?: string },
): Promise<Package> {
  const form = new FormData();
  if (proof.photo) {
    const photo = await scaledPhoto(proof.photo);
    form.append('photo', photo, photo.name || 'photo.jpg');
  }
  if (proof.signature) form.append('signature', proof.signature, 'signature.png');
  if (proof.recipientName) form.append('recipientName', proof.recipientName);
  const response = await fetchWithSession(`/api/packages/${encodeURIComponent(packageId)}/proof`, {
    method: 'POST',
    body: form,
  });
  return (await response.json()) as Package;
}

/** The photo input and the signature pad; `onChange` hears what is there, `handle` gives the signature's PNG. */
export function ProofCapture({
  required,
  onChange,
  handleRef,
}: {
  required: Package['proofRequired'];
  onChange: (draft: ProofDraft) => void;
  handleRef: { current: ProofCaptureHandle | undefined };
}) {
  const [photo, setPhoto] = useState<File>();
  const [preview, setPreview] = useState<string>();
  const [signed, setSigned] = useState(false);
  const canvas = useRef<HTMLCanvasElement>(null);
  const drawing = useRef<{ x: number; y: number } | undefined>(undefined);

  useEffect(() => onChange({ photo, signed }), [photo, signed, onChange]);
  useEffect(() => {
    if (!photo) return;
    const url = URL.createObjectURL(photo);
    setPreview(url);
    return () => URL.revokeObjectURL(url);
  }, [photo]);
  useEffect(() => {
    handleRef.current = {
      signature: () =>
        new Promise((resolve) => {
          if (!signed || !canvas.current) return resolve(undefined);
          canvas.current.toBlob((blob) => resolve(blob ?? undefined), 'image/png');
        }),
    };
  }, [signed, handleRef]);

  const point = (e: PointerEvent<HTMLCanvasElement>) => {
    const c = e.currentTarget;
    const rect = c.getBoundingClientRect();
    return {
      x: ((e.clientX - rect.left) * c.width) / rect.width,
      y: ((e.clientY - rect.top) * c.height) / rect.height,
    };
  };
  const line = (from: { x: number; y: number }, to: { x: number; y: number }) => {
    const ctx = canvas.current?.getContext('2d');
    if (!ctx) return;
    ctx.lineWidth = 4;
    ctx.lineCap = 'round';
    ctx.lineJoin = 'round';
    ctx.strokeStyle = '#111';
    ctx.beginPath();
    ctx.moveTo(from.x, from.y);
    ctx.lineTo(to.x, to.y);
    ctx.stroke();
  };
  const clear = useCallback(() => {
    const c = canvas.current;
    c?.getContext('2d')?.clearRect(0, 0, c.width, c.height);
    setSigned(false);
  }, []);

  const needs = (kind: 'PHOTO' | 'SIGNATURE') => required.includes(kind);
  return (
    <fieldset className="proof-capture">
      <legend>Proof of delivery{required.length ? ' (required)' : ''}</legend>
      {/* The input covers its label, drawn as a big button: the tap reaches the input itself (camera), which keeps its name and focus. */}
      <div className="field photo-button">
        <label htmlFor="proof-photo" className="button big secondary">
          Take photo
        </label>
        <input
          id="proof-photo"
          type="file"
          accept="image/*"
          capture="environment"
          aria-describedby="proof-photo-hint"
          onChange={(e) => setPhoto(e.target.files?.[0] ?? undefined)}
        />
        <small id="proof-photo-hint" className="hint">
          {photo ? `Photo ready: ${photo.name}` : needs('PHOTO') ? 'A photo is required' : 'Optional'}
        </small>
        {preview && <img className="proof-preview" src={preview} alt="The photo taken" />}
      </div>
      <div className="field">
        <span id="sign-label" className="label">
          Signature{needs('SIGNATURE') ? ' (required)' : ''}
        </span>
        <canvas
          ref={canvas}
          className="signature-pad"
          role="img"
          aria-label="Sign here"
          width={600}
          height={240}
          onPointerDown={(e) => {
            e.currentTarget.setPointerCapture(e.pointerId);
            drawing.current = point(e);
          }}
          onPointerMove={(e) => {
            if (!drawing.current) return;
            const next = point(e);
            line(drawing.current, next);
            drawing.current = next;
            setSigned(true);
          }}
          onPointerUp={() => (drawing.current = undefined)}
          onPointerCancel={() => (drawing.current = undefined)}
        />
        <button type="button" className="secondary" onClick={clear} disabled={!signed}>
          Clear
        </button>
      </div>
    </fieldset>
  );
}
