// Proof of delivery as the apps show it (contract section 19): the photo and the signature are API
// paths that need the bearer header, so they are fetched as blobs into object URLs (never a public
// link); the recipient's name is text.
import { useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { fetchWithSession } from './api/client';
import { errorText } from './api/errors';
import { queryKeys } from './query-keys';

export interface Proof {
  photoUrl?: string;
  signatureUrl?: string;
  recipientName?: string;
  at: string;
}

/** An object URL of the image at an API path, revoked when no longer shown. */
function useImage(path: string | undefined, version: string) {
  const blob = useQuery({
    queryKey: queryKeys.proofImage(path, version),
    queryFn: async () => (await fetchWithSession(path!)).blob(),
    enabled: path !== undefined,
    staleTime: Infinity,
  });
  const [url, setUrl] = useState<string>();
  useEffect(() => {
    if (!blob.data) return;
    const objectUrl = URL.createObjectURL(blob.data);
    setUrl(objectUrl);
    return () => {
      URL.revokeObjectURL(objectUrl);
      setUrl(undefined);
    };
  }, [blob.data]);
  return { url, error: blob.error };
}

export function ProofImages({ proof }: { proof: Proof }) {
  const photo = useImage(proof.photoUrl, proof.at);
  const signature = useImage(proof.signatureUrl, proof.at);
  return (
    <div className="proof">
      {proof.recipientName !== undefined && (
        <p>
          Received by <strong data-testid="proof-recipient">{proof.recipientName}</strong>
        </p>
      )}
      {proof.photoUrl &&
        (photo.url ? (
          <img className="proof-photo" src={photo.url} alt="Proof of delivery photo" />
        ) : (
          <p role="status">{photo.error ? errorText(photo.error) : 'Loading the photo…'}</p>
        ))}
      {proof.signatureUrl &&
        (signature.url ? (
          <img className="proof-signature" src={signature.url} alt="Recipient’s signature" />
        ) : (
          <p role="status">{signature.error ? errorText(signature.error) : 'Loading the signature…'}</p>
        ))}
    </div>
  );
}
