// Two Ajv instances: bodies are validated strictly (no type coercion, unknown properties rejected by
// their schemas), while query strings, params and headers are coerced from text.
import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { UUID_PATTERN } from '../shared/errors.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

function makeAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({
    coerceTypes: coerce ? 'array' : false,
    useDefaults: true,
    removeAdditional: false,
    allErrors: false,
    verbose: true,
    strict: false,
  });
  addFormats(ajv);
  // ajv-formats' uuid also accepts a `urn:uuid:` prefix, which PostgreSQL refuses: only the plain form.
  ajv.addFormat('uuid', UUID_PATTERN);
  // PostgreSQL text cannot hold NUL; a date-time must be a year PostgreSQL can store.
  ajv.addFormat('date-time', {
    type: 'string',
    validate: (value: string) =>
      /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:?\d{2})$/.test(value) &&
      !Number.isNaN(Date.parse(value)) &&
      Number(value.slice(0, 4)) >= 1970,
  });
  return ajv;
}

const strictAjv = makeAjv(false);
const coercingAjv = makeAjv(true);

export const compileBodySchema = (schema: object) => strictAjv.compile(schema);

export const validatorCompiler: FastifySchemaCompiler<any> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? strictAjv : coercingAjv;
  return ajv.compile(schema as object) as any;
};

export function describeValidationError(errors: ErrorObject[] | Partial<ErrorObject>[], context: string): string {
  // A failed union reports each branch first and the anyOf last: the anyOf says more.
  const all = errors as ErrorObject[];
  const first = all.find((e) => e.keyword === 'anyOf' && e.instancePath === all[0]?.instancePath) ?? all[0];
  if (!first) return `${context} is invalid`;
  const where = [context, ...(first.instancePath ?? '').split('/').filter(Boolean)].join('.');
  switch (first.keyword) {
    case 'additionalProperties':
      return `${where} has an unknown property "${(first.params as { additionalProperty: string }).additionalProperty}"`;
    case 'required':
      return `${where}.${(first.params as { missingProperty: string }).missingProperty} is required`;
    case 'enum':
      return `${where} must be one of ${((first.params as { allowedValues: unknown[] }).allowedValues ?? []).join(', ')}`;
    case 'anyOf': {
      // Unions of literals (our enums): list the allowed values when the schema tells them.
      const options = (first.parentSchema as { anyOf?: { const?: unknown }[] } | undefined)?.anyOf;
      const values = options?.map((o) => o.const).filter((v) => v !== undefined);
      if (values && values.length === options?.length) return `${where} must be one of ${values.join(', ')}`;
      return `${where} ${first.message ?? 'is invalid'}`;
    }
    case 'format':
      return `${where} must be a valid ${(first.params as { format: string }).format}`;
    default:
      return `${where} ${first.message ?? 'is invalid'}`;
  }
}
