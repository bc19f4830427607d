// Saves a blob under a file name: API files (CSV, PDF) are fetched with the bearer header, since the
// access token lives in memory and a plain link could not authenticate.
export function saveBlob(blob: Blob, filename: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
