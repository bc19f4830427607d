// Every API error as an ApiError carrying the server's message (and code, and Retry-After), and the
// words the pages show for it.

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code?: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

/** "in 3 minutes" for a Retry-After of 170 s. */
export function inWords(seconds: number): string {
  if (seconds < 60) return `${seconds} second${seconds === 1 ? '' : 's'}`;
  const minutes = Math.ceil(seconds / 60);
  if (minutes < 60) return `${minutes} minute${minutes === 1 ? '' : 's'}`;
  const hours = Math.ceil(minutes / 60);
  return `${hours} hour${hours === 1 ? '' : 's'}`;
}

export function errorText(err: unknown): string {
  if (err instanceof ApiError) {
    if (err.status === 429 && err.retryAfterSeconds !== undefined) {
      const words = inWords(err.retryAfterSeconds);
      const inSeconds = `${err.retryAfterSeconds} seconds`;
      return err.message.includes(inSeconds)
        ? err.message.replace(inSeconds, words)
        : `${err.message.replace(/\.?$/, '.')} Try again in ${words}.`;
    }
    return err.message;
  }
  if (err instanceof TypeError) return 'The server could not be reached. Check your connection and try again.';
  return err instanceof Error ? err.message : String(err);
}

export async function toApiError(response: Response, parsed?: unknown): Promise<ApiError> {
  let body: { message?: unknown; code?: unknown } = {};
  if (parsed && typeof parsed === 'object') body = parsed as typeof body;
  else {
    try {
      body = await response.clone().json();
    } catch {
      // not JSON (or already read): the status text says enough
    }
  }
  const retryAfter = Number(response.headers.get('retry-after'));
  return new ApiError(
    response.status,
    typeof body.message === 'string' ? body.message : `${response.status} ${response.statusText}`,
    typeof body.code === 'string' ? body.code : undefined,
    Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined,
  );
}
