// Registration, login with an SMS code, refresh, logout, the current user and passwords.
import type { FeatureModule } from '../../http/context.js';
import { SuccessMessage, errorResponses as errors } from '../../shared/schemas.js';
import {
  ChangePasswordBody,
  CodeSessionBody,
  CodeSessionResponse,
  ForgotPasswordBody,
  LoginBody,
  LogoutBody,
  RefreshResponse,
  RefreshTokenBody,
  RegisterBody,
  RegisterResponse,
  ResetPasswordBody,
  SendRegisterOtpBody,
  UpdateMeBody,
  VerifyOtpBody,
  VerifyOtpResponse,
} from './auth.schemas.js';
import { UserResponse } from './users.schemas.js';

const tags = ['auth'];
const bearer = [{ bearerAuth: [] }];

export const authModule: FeatureModule = async (app, ctx) => {
  const { auth, codes, sessions, passwords } = ctx.services;

  app.post(
    '/auth/register/send-otp',
    {
      schema: {
        tags,
        summary: 'Start a registration: send a code to the phone',
        body: SendRegisterOtpBody,
        response: { 200: CodeSessionResponse, ...errors(400, 409, 429) },
      },
    },
    async (request) => {
      const { sessionId, phone } = await auth.sendRegisterOtp(request.body.phone);
      return { success: true, sessionId, phone, message: 'A verification code was sent to your phone' };
    },
  );

  app.post(
    '/auth/register',
    {
      schema: {
        tags,
        summary: 'Register an account (CUSTOMER is active at once; others wait for approval)',
        body: RegisterBody,
        response: { 201: RegisterResponse, ...errors(400, 401, 404, 409) },
      },
    },
    async (request, reply) => {
      const { user, tokens } = await auth.register(request.body);
      reply.code(201);
      return {
        success: true,
        user,
        message: tokens ? 'Account created' : 'Account created; it can be used once an admin approves it',
        ...(tokens ?? {}),
      };
    },
  );

  app.post(
    '/auth/login',
    {
      schema: {
        tags,
        summary: 'Log in, step 1: check the password and send a code to the phone',
        body: LoginBody,
        response: { 200: CodeSessionResponse, ...errors(400, 401, 403, 429) },
      },
    },
    async (request) => {
      const { identifier, password, rememberMe } = request.body;
      const { sessionId, phone } = await auth.login(identifier, password, rememberMe);
      return { success: true, sessionId, phone, message: 'A verification code was sent to your phone' };
    },
  );

  app.post(
    '/auth/login/send-otp',
    {
      schema: {
        tags,
        summary: 'Send the login code again (voids the previous code)',
        body: CodeSessionBody,
        response: { 200: SuccessMessage, ...errors(400, 401, 429) },
      },
    },
    async (request) => {
      await codes.resendLogin(request.body.sessionId, request.body.phone);
      return { success: true, message: 'A new verification code was sent to your phone' };
    },
  );

  app.post(
    '/auth/login/verify-otp',
    {
      schema: {
        tags,
        summary: 'Log in, step 2: the code gives the access and refresh tokens',
        body: VerifyOtpBody,
        response: { 200: VerifyOtpResponse, ...errors(400, 401, 403) },
      },
    },
    async (request) => {
      const { sessionId, phone, code } = request.body;
      return { success: true, ...(await auth.verifyLoginOtp(sessionId, phone, code)) };
    },
  );

  app.post(
    '/auth/refresh',
    {
      schema: {
        tags,
        summary: 'A new access token for a refresh token',
        body: RefreshTokenBody,
        response: { 200: RefreshResponse, ...errors(400, 401, 403) },
      },
    },
    async (request) => ({ success: true, accessToken: await sessions.refresh(request.body.refreshToken) }),
  );

  app.post(
    '/auth/logout',
    {
      schema: {
        tags,
        summary: 'Revoke the session of a refresh token (its access tokens stop working at once)',
        description:
          "A driver's live session revoked also sets the driver OFFLINE (even on a job: nobody is behind the phone), and `pushEndpoint`, when given, deletes the session user's push subscription with that endpoint. An unknown or already revoked token: 200, nothing else changes.",
        body: LogoutBody,
        response: { 200: SuccessMessage, ...errors(400) },
      },
    },
    async (request) => {
      await sessions.logout(request.body.refreshToken, request.body.pushEndpoint);
      return { success: true, message: 'Logged out' };
    },
  );

  app.get(
    '/auth/me',
    {
      onRequest: ctx.guard.required(),
      schema: {
        tags,
        summary: 'The authenticated user',
        security: bearer,
        response: { 200: UserResponse, ...errors(401, 403) },
      },
    },
    async (request) => auth.me(request.auth.userId),
  );

  app.patch(
    '/auth/me',
    {
      onRequest: ctx.guard.required(),
      schema: {
        tags,
        summary: "Change the authenticated user's settings: the language (en, sw or fr; null: the browser's)",
        security: bearer,
        body: UpdateMeBody,
        response: { 200: UserResponse, ...errors(400, 401, 403) },
      },
    },
    async (request) => auth.updateMe(request.auth.userId, request.body),
  );

  app.post(
    '/auth/password/forgot',
    {
      schema: {
        tags,
        summary: 'Send a password reset code (the same answer whether or not the account exists)',
        body: ForgotPasswordBody,
        response: { 200: CodeSessionResponse, ...errors(400, 429) },
      },
    },
    async (request) => {
      const { sessionId, phone } = await passwords.forgotPassword(request.body.identifier);
      return { success: true, sessionId, phone, message: 'If the account exists, a reset code was sent to its phone' };
    },
  );

  app.post(
    '/auth/password/reset',
    {
      schema: {
        tags,
        summary: 'Set a new password with the reset code (revokes every session)',
        body: ResetPasswordBody,
        response: { 200: SuccessMessage, ...errors(400, 401) },
      },
    },
    async (request) => {
      const { sessionId, phone, code, newPassword } = request.body;
      await passwords.resetPassword(sessionId, phone, code, newPassword);
      return { success: true, message: 'Password changed; log in with the new password' };
    },
  );

  app.post(
    '/auth/password/change',
    {
      onRequest: ctx.guard.required(),
      schema: {
        tags,
        summary: 'Change the password (other sessions are revoked)',
        security: bearer,
        body: ChangePasswordBody,
        response: { 200: SuccessMessage, ...errors(400, 401, 403, 429) },
      },
    },
    async (request) => {
      const { currentPassword, newPassword } = request.body;
      await passwords.changePassword(request.auth.userId, request.auth.sessionId, currentPassword, newPassword);
      return { success: true, message: 'Password changed' };
    },
  );
};
