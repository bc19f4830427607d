// Two Ajv instances: bodies are validated strictly (no type coercion, unknown properties rejected by
// their schemas), while query strings, params and headers are coerced from text.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import SerializerSelector from '@fastify/fast-json-stringify-compiler';
import type { FastifySchemaCompiler, FastifyServerOptions } from 'fastify';
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
  ajv.addKeyword({
    keyword: TEXT_RULE,
    type: 'string',
    schemaType: 'string',
    validate: (kind: string, data: string) => !(kind === 'multiline' ? CONTROL_EXCEPT_LINES : CONTROL).test(data),
  });
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

/**
 * Section 1: no text field takes control characters (U+0000–U+001F, U+007F); free-text fields
 * (MULTILINE_FIELDS) may hold line breaks and tabs. One rule, added to every string of every body,
 * query and path schema when it is compiled, so no field can forget it and it is decided before any
 * lookup.
 */
const TEXT_RULE = 'x-text';
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001F\u007F]/;
// eslint-disable-next-line no-control-regex -- as above, less tab, line feed and carriage return
const CONTROL_EXCEPT_LINES = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/;
const MULTILINE_FIELDS = new Set(['notes', 'description', 'reason', 'address', 'businessAddress', 'comment']);
const NESTED = ['items', 'anyOf', 'oneOf', 'allOf', 'not', 'if', 'then', 'else', 'additionalProperties'];

export function withTextRule(schema: unknown, multiline = false): unknown {
  if (Array.isArray(schema)) return schema.map((s) => withTextRule(s, multiline));
  if (!schema || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = { ...(schema as Record<string, unknown>) };
  const type = out.type;
  if ((type === 'string' || (Array.isArray(type) && type.includes('string'))) && out[TEXT_RULE] === undefined) {
    out[TEXT_RULE] = multiline ? 'multiline' : 'line';
  }
  const properties = out.properties as Record<string, unknown> | undefined;
  if (properties && typeof properties === 'object') {
    out.properties = Object.fromEntries(
      Object.entries(properties).map(([name, sub]) => [name, withTextRule(sub, MULTILINE_FIELDS.has(name))]),
    );
  }
  for (const key of NESTED) if (out[key] && typeof out[key] === 'object') out[key] = withTextRule(out[key], multiline);
  return out;
}

const strictAjv = makeAjv(false);
const coercingAjv = makeAjv(true);

export const compileBodySchema = (schema: object) => strictAjv.compile(withTextRule(schema) as object);
/** For checking what we send (tests): our own data is not held to the input rule on control characters. */
export const compileResponseSchema = (schema: object) => strictAjv.compile(schema);

/**
 * Each route's validator is compiled on its first request, not at start: compiling every route's
 * schemas took about a third of the time to ready (B7), and held the code of routes an instance may
 * never serve. A schema Ajv cannot compile still fails the tests, which reach every route.
 */
export const validatorCompiler: FastifySchemaCompiler<any> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? strictAjv : coercingAjv;
  // Header values cannot carry control characters (Node refuses them while parsing).
  const prepared = (httpPart === 'headers' ? schema : withTextRule(schema)) as object;
  let compiled: ValidateFunction | undefined;
  const validate = (data: unknown): boolean => {
    compiled ??= ajv.compile(prepared);
    const valid = compiled(data) as boolean;
    validate.errors = compiled.errors;
    return valid;
  };
  validate.errors = null as ValidateFunction['errors'];
  return validate;
};

/**
 * The response serializers (fast-json-stringify, Fastify's default) compiled on each route's first
 * answer with that status, for the same reasons as the validators above. Passed to Fastify as
 * `schemaController.compilersFactory.buildSerializer`.
 */
export function lazySerializerFactory(): NonNullable<
  NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']
>['buildSerializer'] {
  const buildDefault = SerializerSelector();
  return (externalSchemas, serializerOpts) => {
    const compile = buildDefault(externalSchemas, serializerOpts as never);
    return (route) => {
      let serialize: ((data: unknown) => string) | undefined;
      return (data: unknown) => (serialize ??= compile(route))(data);
    };
  };
}

export function describeValidationError(errors: ErrorObject[] | Partial<ErrorObject>[], context: string): string {
  // A failed union reports each branch first and the anyOf last: the anyOf says more.
  const all = errors as ErrorObject[];
  // ...unless a branch failed on control characters: that is the reason, whatever the type.
  const first =
    all.find((e) => e.keyword === TEXT_RULE) ??
    all.find((e) => e.keyword === 'anyOf' && e.instancePath === all[0]?.instancePath) ??
    all[0];
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
    case TEXT_RULE:
      return `${where} must not contain control characters`;
    default:
      return `${where} ${first.message ?? 'is invalid'}`;
  }
}
