// Spectral over the generated OpenAPI document (npm run lint:openapi, in CI): spectral:oas and the
// OWASP API security ruleset. What is changed here, and why:
//
// - The OWASP size rules (string-limit, string-restricted, integer-limit, integer-format, array-limit)
//   guard against unbounded *input* (API4: unrestricted resource consumption). The ruleset applies
//   them to every schema, responses included, where they say nothing about what a client can send.
//   They are switched off and re-declared below over request bodies and parameters only, with the
//   same checks and severities; there every string has maxLength (or enum/const), every integer
//   bounds and a format, every array maxItems.
// - define-cors-origin: the API sends no CORS headers on purpose. The web console is served from the
//   same origin; browsers on other origins are not meant to call the API with a user's token.
// - write-restricted / read-restricted on the public routes: registration, login, the SMS code
//   steps, refresh, logout, the password reset and the country list are public by definition
//   (contract sections 4 and 6), declared with `security: []`; every other write is secured.
// - no-credentials-in-url on the tracking routes: a tracking link is a capability URL by design
//   (contract section 14: the public page and stream are reached by the link alone; the token is
//   256 bits, stored hashed, revocable, and redacted from the request log), and the streams take
//   `access_token` in the query because a browser's EventSource cannot send an Authorization
//   header (also redacted from the log; the header still works and is preferred).
// - no-api-keys-in-url on the deviceKey scheme: Traccar Client's OsmAnd protocol sends the device's
//   identifier in the query (`?id=`) and cannot send a header (contract section 19). The key is a
//   random 192-bit value made for that one device, stored hashed, revocable at once, limited per key
//   and redacted from the request log; it moves one driver's position and nothing else.
// - rate-limit on /health and /health/ready: those are not rate limited (contract section 5), so
//   their responses carry no rate-limit headers.
import { oas } from '@stoplight/spectral-rulesets';
import owasp from '@stoplight/spectral-owasp-ruleset';
import { defined, schema, xor } from '@stoplight/spectral-functions';

const inRequests = (type) => {
  const oneOf = `[?(@ && (@.type=="${type}" || (@.type && @.type.constructor.name === "Array" && @.type.includes("${type}"))))]`;
  return [`$.paths[*][*].requestBody.content[*].schema..${oneOf}`, `$.paths[*][*].requestBody.content[*].schema${oneOf}`, `$.paths[*][*].parameters[*].schema${oneOf}`, `$.paths[*][*].parameters[*].schema..${oneOf}`];
};

const anyOfRequired = (...fields) => ({ function: schema, functionOptions: { schema: { type: 'object', anyOf: fields.map((f) => ({ required: [f] })) } } });

const publicWrites = ['register/send-otp', 'register', 'login', 'login/send-otp', 'login/verify-otp', 'refresh', 'logout', 'password/forgot', 'password/reset'];

export default {
  extends: [oas, owasp],
  rules: {
    'owasp:api4:2023-string-limit': 'off',
    'owasp:api4:2023-string-restricted': 'off',
    'owasp:api4:2023-integer-limit': 'off',
    'owasp:api4:2023-integer-format': 'off',
    'owasp:api4:2023-array-limit': 'off',
    'owasp:api8:2023-define-cors-origin': 'off',
    'request-string-limit': {
      message: 'A request string must specify maxLength, enum, or const.',
      severity: 'error',
      given: inRequests('string'),
      then: anyOfRequired('maxLength', 'enum', 'const'),
    },
    'request-string-restricted': {
      message: 'A request string should specify a format, pattern, enum, or const.',
      severity: 'warn',
      given: inRequests('string'),
      then: anyOfRequired('format', 'pattern', 'enum', 'const'),
    },
    'request-integer-limit': {
      message: 'A request integer must specify minimum and maximum.',
      severity: 'error',
      given: inRequests('integer'),
      then: [
        { function: xor, functionOptions: { properties: ['minimum', 'exclusiveMinimum'] } },
        { function: xor, functionOptions: { properties: ['maximum', 'exclusiveMaximum'] } },
      ],
    },
    'request-integer-format': {
      message: 'A request integer must specify format (int32 or int64).',
      severity: 'error',
      given: inRequests('integer'),
      then: { field: 'format', function: defined },
    },
    'request-array-limit': {
      message: 'A request array must specify maxItems.',
      severity: 'error',
      given: inRequests('array'),
      then: { field: 'maxItems', function: defined },
    },
  },
  overrides: [
    {
      files: [
        '**/openapi.json#/paths/~1api~1tracking~1%7Btoken%7D',
        '**/openapi.json#/paths/~1api~1tracking~1%7Btoken%7D~1stream',
        '**/openapi.json#/paths/~1api~1packages~1%7Bid%7D~1track',
        '**/openapi.json#/paths/~1api~1rides~1%7Bid%7D~1track',
        '**/openapi.json#/paths/~1api~1events~1stream',
        '**/openapi.json#/paths/~1api~1admin~1drivers~1live',
        '**/openapi.json#/paths/~1api~1admin~1drivers~1live~1stream',
        '**/openapi.json#/paths/~1api~1companies~1me~1drivers~1live',
        '**/openapi.json#/paths/~1api~1companies~1me~1drivers~1live~1stream',
      ],
      rules: { 'owasp:api2:2023-no-credentials-in-url': 'off' },
    },
    {
      files: [...publicWrites.map((p) => `**/openapi.json#/paths/~1api~1auth~1${p.replace(/\//g, '~1')}`)],
      rules: { 'owasp:api2:2023-write-restricted': 'off' },
    },
    {
      files: ['**/openapi.json#/components/securitySchemes/deviceKey'],
      rules: { 'owasp:api2:2023-no-api-keys-in-url': 'off' },
    },
    {
      files: ['**/openapi.json#/paths/~1health', '**/openapi.json#/paths/~1health~1ready'],
      rules: { 'owasp:api4:2023-rate-limit': 'off', 'owasp:api2:2023-read-restricted': 'off' },
    },
  ],
};
