// Routes of proof of delivery (contract section 19). POST /packages/:id/proof is the one route that
// takes multipart/form-data (section 1's exception): @fastify/multipart is registered in this
// module's own scope only, so every other route stays JSON-only with its 1 MiB limit.
import multipart from '@fastify/multipart';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FeatureModule } from '../../http/context.js';
import { idempotencyKeyFrom } from '../../http/idempotency.js';
import { uploadTimeout } from '../../http/upload-timeout.js';
import { AppError, badRequest } from '../../shared/errors.js';
import { IdParams, errorResponses as errors } from '../../shared/schemas.js';
import { PackageResponse } from '../packages/packages.schemas.js';
import { mb } from './proof-images.js';
import type { ProofPart, ProofUpload } from './proof.service.js';

const security = [{ bearerAuth: [] }];
const RECIPIENT_NAME_MAX = 100;
// eslint-disable-next-line no-control-regex -- matching control characters is the point (section 1)
const CONTROL = /[\u0000-\u001f\u007f]/;

export const proofModule: FeatureModule = async (app, { services, guard, deps }) => {
  const { proof: service, packages } = services;
  const { maxBytes, uploadTimeoutMs } = deps.config.proof;
  const tags = ['packages'];

  await app.register(multipart, {
    // Per part: two images and one short text field, nothing else.
    limits: { fileSize: maxBytes, files: 2, fields: 1, parts: 3, fieldSize: 1024, fieldNameSize: 100, headerPairs: 50 },
    throwFileSizeLimit: true,
  });

  /**
   * Contract section 19: the caller is authorized from the URL and the token before a byte of the
   * body is read. A refusal answers at once with Connection: close, and the body is never read, so
   * that nobody but the package's driver can make the server hold an upload.
   */
  const authorizeFirst = async (request: FastifyRequest, reply: FastifyReply) => {
    try {
      if (!request.isMultipart())
        throw new AppError(415, 'UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be multipart/form-data');
      const key = idempotencyKeyFrom(request.headers);
      // With an Idempotency-Key the status is checked with the work, so that a replay after the
      // delivery still gets the stored answer; the caller is the package's driver either way.
      await service.checkUploader((request.params as { id: string }).id, request.auth, { status: key === undefined });
    } catch (err) {
      if (!request.raw.complete) reply.header('connection', 'close');
      throw err;
    }
  };

  app.post(
    '/packages/:id/proof',
    {
      onRequest: [guard.required(), uploadTimeout(uploadTimeoutMs, 'PROOF_UPLOAD_TIMEOUT')],
      preHandler: authorizeFirst,
      schema: {
        tags,
        summary: `Upload proof of delivery (assigned driver; PICKED_UP or IN_TRANSIT; honours Idempotency-Key): multipart/form-data with photo (JPEG, PNG or WebP) and/or signature (PNG), each at most PROOF_MAX_SIZE, and recipientName. A second upload replaces the parts it sends and keeps the others`,
        security,
        params: IdParams,
        consumes: ['multipart/form-data'],
        body: Type.Object(
          {
            photo: Type.Optional(
              Type.String({
                format: 'binary',
                maxLength: maxBytes,
                description: 'JPEG, PNG or WebP, decided by content; re-encoded (no EXIF) to at most 1600 px',
              }),
            ),
            signature: Type.Optional(
              Type.String({
                format: 'binary',
                maxLength: maxBytes,
                description: 'PNG, decided by content; re-encoded to at most 1600 px',
              }),
            ),
            recipientName: Type.Optional(Type.String({ maxLength: RECIPIENT_NAME_MAX })),
          },
          { description: 'multipart/form-data' },
        ),
        response: { 200: PackageResponse, ...errors(400, 401, 403, 404, 408, 409, 413, 415, 422, 503) },
      },
      // The body is multipart: read below, part by part, not validated as JSON.
      validatorCompiler: () => () => true,
    },
    async (request, reply) => {
      const id = request.params.id;
      // The caller is the package's driver (authorizeFirst); the form's text is checked as it is read.
      const upload = await readParts(request.parts(), maxBytes);
      const auth = request.auth;
      const result = await service.upload<PackageResponse>(id, auth, upload, {
        // A decode slot is waited for within what is left of PROOF_UPLOAD_TIMEOUT (counted from the request's start).
        waitMs: uploadTimeoutMs - reply.elapsedTime,
        key: idempotencyKeyFrom(request.headers),
        // The package as its driver sees it (GET /packages/:id), stored as the key's answer.
        present: (row) => packages.present(row, auth),
      });
      if (result.replayed) reply.header('idempotent-replayed', 'true');
      // A stored answer is always this route's 200 (a failed request stores nothing).
      return reply.code(result.statusCode as 200).send(result.body);
    },
  );

  for (const part of ['photo', 'signature'] as const satisfies ProofPart[]) {
    app.get(
      `/packages/:id/proof/${part}`,
      {
        onRequest: guard.required(),
        schema: {
          tags,
          summary: `The proof of delivery's ${part} (whoever may read the package; with the bearer header, never a public link)`,
          security,
          params: IdParams,
          response: {
            200: {
              description: `The ${part}, served with Cache-Control: no-store`,
              content: Object.fromEntries(
                (part === 'photo' ? ['image/jpeg', 'image/webp'] : ['image/png']).map((type) => [
                  type,
                  { schema: { type: 'string', format: 'binary' } },
                ]),
              ),
            },
            ...errors(400, 401, 404),
          },
        },
      },
      async (request, reply) => {
        const object = await service.read(request.params.id, request.auth, part);
        return reply
          .type(object.contentType)
          .header('x-content-type-options', 'nosniff')
          .header(
            'content-disposition',
            `inline; filename="${part}.${object.contentType.split('/')[1] === 'jpeg' ? 'jpg' : object.contentType.split('/')[1]}"`,
          )
          .header('cross-origin-resource-policy', 'same-origin')
          .send(object.data);
      },
    );
  }
};

type Part =
  | { type: 'file'; fieldname: string; toBuffer(): Promise<Buffer> }
  | { type: 'field'; fieldname: string; value: unknown };

/** The form's parts: photo and signature (files) and recipientName (text), each at most once; anything else is 400. */
async function readParts(parts: AsyncIterable<unknown>, maxBytes: number): Promise<ProofUpload> {
  const upload: ProofUpload = {};
  const seen = new Set<string>();
  try {
    for await (const raw of parts) {
      const part = raw as Part;
      if (seen.has(part.fieldname)) throw badRequest(`${part.fieldname} may be sent once`, 'VALIDATION_FAILED');
      seen.add(part.fieldname);
      if (part.type === 'file') {
        if (part.fieldname !== 'photo' && part.fieldname !== 'signature')
          throw badRequest(`Unknown file field "${part.fieldname}": send photo and/or signature`, 'VALIDATION_FAILED');
        let data: Buffer;
        try {
          data = await part.toBuffer();
        } catch (err) {
          if ((err as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') {
            throw new AppError(
              413,
              'PROOF_TOO_LARGE',
              `${part.fieldname} is larger than ${mb(maxBytes)} (PROOF_MAX_SIZE)`,
            );
          }
          throw err;
        }
        if (data.length === 0) throw badRequest(`${part.fieldname} is empty`, 'VALIDATION_FAILED');
        upload[part.fieldname] = data;
        continue;
      }
      if (part.fieldname !== 'recipientName')
        throw badRequest(
          `Unknown field "${part.fieldname}": send photo, signature and recipientName`,
          'VALIDATION_FAILED',
        );
      const value = typeof part.value === 'string' ? part.value.trim() : '';
      if (value.length === 0 || value.length > RECIPIENT_NAME_MAX)
        throw badRequest(`recipientName must be 1 to ${RECIPIENT_NAME_MAX} characters`, 'VALIDATION_FAILED');
      if (CONTROL.test(value))
        throw badRequest('recipientName must not contain control characters', 'VALIDATION_FAILED');
      upload.recipientName = value;
    }
  } catch (err) {
    if (err instanceof AppError) throw err;
    const code = (err as { code?: string }).code ?? '';
    // The form broke a limit (parts, files, fields) or is malformed: the client's fault.
    if (code.startsWith('FST_'))
      throw badRequest(
        'The form must hold photo and/or signature files and an optional recipientName field',
        'VALIDATION_FAILED',
      );
    if (err instanceof Error && /multipart|boundary|Unexpected end of form|Malformed/i.test(err.message))
      throw badRequest('The multipart body is malformed', 'VALIDATION_FAILED');
    throw err;
  }
  return upload;
}
