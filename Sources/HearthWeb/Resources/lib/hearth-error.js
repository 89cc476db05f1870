// The one error type of Hearth's web client: a code to branch on and a message in plain words.

const AUTH_WORDS = {
  EMAIL_EXISTS: 'That email address already has an account.',
  INVALID_LOGIN_CREDENTIALS: 'Wrong email address or password.',
  INVALID_PASSWORD: 'Wrong email address or password.',
  EMAIL_NOT_FOUND: 'Wrong email address or password.',
  INVALID_EMAIL: 'That is not an email address.',
  MISSING_EMAIL: 'Enter an email address.',
  MISSING_PASSWORD: 'Enter a password.',
  WEAK_PASSWORD: 'The password must be at least 6 characters.',
  TOO_MANY_ATTEMPTS_TRY_LATER: 'Too many attempts. Try again later.',
  USER_DISABLED: 'This account has been disabled.',
  USER_NOT_FOUND: 'This account no longer exists.',
  TOKEN_EXPIRED: 'Your session has ended. Sign in again.',
  INVALID_REFRESH_TOKEN: 'Your session has ended. Sign in again.',
  INVALID_ID_TOKEN: 'Your session has ended. Sign in again.',
  NOT_SIGNED_IN: 'Sign in first.',
  INSUFFICIENT_PERMISSION: 'You are not allowed to do that.',
  INVALID_OOB_CODE: 'This link has been used already or is not valid. Ask for a new one.',
  EXPIRED_OOB_CODE: 'This link has expired. Ask for a new one.',
  EMAIL_NOT_CONFIGURED: 'This server cannot send email. Ask its operator.',
  EMAIL_SEND_FAILED: 'The email could not be sent. Try again later.',
  NEED_CONFIRMATION: 'An account with this email address exists. Sign in with your password first, then connect this provider from your account page.',
  FEDERATED_USER_ID_ALREADY_LINKED: 'That account is already connected to another person here.',
  USER_CANCELLED: 'Sign-in was cancelled.',
  INVALID_IDP_RESPONSE: 'The sign-in provider’s answer could not be used. Try again.',
  OPERATION_NOT_ALLOWED: 'That way of signing in is turned off.',
  INVALID_PROVIDER_ID: 'That way of signing in is not available.',
  CREDENTIAL_TOO_OLD_LOGIN_AGAIN: 'For your safety, sign in again first.',
  PROVIDER_SIGN_IN_LOST: 'The sign-in was started in another tab or has expired. Start again.',
};

export class HearthError extends Error {
  /**
   * @param {string} code e.g. 'permission-denied', 'network', 'auth/EMAIL_EXISTS'
   * @param {string} message what went wrong, in words for a person
   * @param {{status?: number, detail?: string}} [extra] the HTTP status and the server's text
   */
  constructor(code, message, { status, detail } = {}) {
    super(message);
    this.name = 'HearthError';
    this.code = code;
    this.status = status;
    this.detail = detail;
  }

  static network() {
    return new HearthError('network', 'The server could not be reached. Check your connection and try again.');
  }

  static auth(firebaseCode, status) {
    // Firebase appends details after a colon: "WEAK_PASSWORD : Password should be…".
    const code = String(firebaseCode || 'UNKNOWN').split(/[\s:]/)[0];
    const words = AUTH_WORDS[code] || `Signing in failed (${code.toLowerCase().replaceAll('_', ' ')}).`;
    return new HearthError(`auth/${code}`, words, { status, detail: firebaseCode });
  }

  /** The error for a failed database or storage response. */
  static fromResponse(status, text) {
    const detail = text || `HTTP ${status}`;
    if (status === 401 || status === 403) {
      if (/expired|parse auth token/i.test(detail)) return HearthError.auth('TOKEN_EXPIRED', status);
      return new HearthError('permission-denied', 'You are not allowed to do that.', { status, detail });
    }
    if (status === 404) return new HearthError('not-found', 'It is not there any more.', { status, detail });
    if (status === 412) return new HearthError('conflict', 'Someone else changed it at the same time. Try again.', { status, detail });
    if (status === 413 || /exceeds|too large/i.test(detail)) {
      return new HearthError('too-large', 'That is too large.', { status, detail });
    }
    if (status === 400) return new HearthError('invalid', `The server refused that: ${detail}`, { status, detail });
    return new HearthError('server', `The server had a problem (${detail}). Try again.`, { status, detail });
  }

  /**
   * The error for a realtime protocol answer that is not `ok` (`permission_denied`,
   * `datastale`, `write_too_big`, `failed`, …), shaped as the REST answer of the same cause.
   */
  static fromRealtime(status, message) {
    const detail = typeof message === 'string' && message ? message : String(status);
    switch (status) {
      case 'permission_denied':
        return new HearthError('permission-denied', 'You are not allowed to do that.', { status: 401, detail });
      case 'expired_token':
      case 'invalid_token':
        return HearthError.auth('TOKEN_EXPIRED', 401);
      case 'datastale':
        return new HearthError('conflict', 'Someone else changed it at the same time. Try again.', { status: 412, detail });
      case 'too_big':
      case 'write_too_big':
        return new HearthError('too-large', 'That is too large.', { status: 413, detail });
      case 'unavailable':
        return new HearthError('server', `The server had a problem (${detail}). Try again.`, { status: 503, detail });
      case 'disconnect':
        return HearthError.network();
      default:
        return new HearthError('invalid', `The server refused that: ${detail}`, { status: 400, detail });
    }
  }
}
