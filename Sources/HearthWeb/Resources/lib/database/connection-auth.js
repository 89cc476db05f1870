// Signing the realtime connection in: `auth` with an ID token (`gauth` for an admin token that
// is not a JWT, `unauth` for none) on each new connection before the sync core uses it, again
// whenever the token changes, and with a fresh token when the server says the one it has
// stopped being valid.

/// The credential side of one `Connection`. Each connection (from its handshake to its end) is
/// an epoch: an answer or a token that arrives after its connection ended is ignored.
export class ConnectionAuth {
  /// @param {object} options
  /// @param {import('./connection.js').Connection} options.connection
  /// @param {(forceRefresh: boolean) => Promise<string|null>} options.credential the ID token (or admin token)
  /// @param {() => string|null|undefined} options.credentialNow the credential if it is at hand
  ///   (null: signed out; undefined: it must be fetched)
  /// @param {() => boolean} options.isOffline whether the database was taken offline (goOffline)
  /// @param {() => boolean} options.isConnected whether the sync core uses the connection
  constructor({ connection, credential, credentialNow, isOffline, isConnected }) {
    this._isConnected = isConnected;
    this._connection = connection;
    this._credential = credential;
    this._credentialNow = credentialNow;
    this._isOffline = isOffline;
    this._epoch = 0;
  }

  /// A new connection is up: sends the credential and waits for its answer, so that what
  /// follows runs as the right user. A refused token is refreshed once. Resolves true when the
  /// connection may be used (signed in, or signed out), false when it went meanwhile.
  async signIn() {
    const epoch = ++this._epoch;
    const signedIn = await this._authenticate(epoch);
    return signedIn && epoch === this._epoch && this._connection.isReady;
  }

  /// The connection ended: answers still on their way are for it.
  connectionLost() { this._epoch += 1; }

  /// The signed-in user's token changed: the connection signs in again at once (before any
  /// write that follows, which the server then judges as the new user).
  tokenChanged() { this._send(this._credentialNow()); }

  /// The server says the credential stopped being valid (`ac`): sign in again with a fresh one.
  revoked() { this._authenticate(this._epoch, true); }

  async _authenticate(epoch, forceRefresh = false) {
    let credential;
    try {
      credential = await this._credential(forceRefresh);
    } catch (error) {
      if (error?.code === 'network') {
        // Cannot get a token now: try the whole connection again later.
        this._connection.stop();
        setTimeout(() => { if (!this._isOffline()) this._connection.start(); }, 2000);
        return false;
      }
      credential = null; // the session ended: signed out
    }
    if (epoch !== this._epoch || !this._connection.isReady) return false;
    if (!credential) return true;
    const action = credential.split('.').length === 3 ? 'auth' : 'gauth';
    let answer;
    try {
      answer = await this._connection.request(action, { cred: credential });
    } catch {
      return false;
    }
    if (answer.status === 'ok') return true;
    if (!forceRefresh && (answer.status === 'expired_token' || answer.status === 'invalid_token')) {
      return this._authenticate(epoch, true);
    }
    console.warn(`Hearth: the server refused the credential (${answer.status}); continuing signed out.`);
    return true;
  }

  /// Sends `credential` now, not waiting for the answer. A token that is not at hand (expired)
  /// is fetched first.
  _send(credential) {
    if (credential === undefined) {
      const epoch = this._epoch;
      this._credential(false).then((fetched) => {
        if (epoch === this._epoch && this._isConnected()) this._send(fetched ?? null);
      }, () => {});
      return;
    }
    const action = !credential ? 'unauth' : credential.split('.').length === 3 ? 'auth' : 'gauth';
    this._connection.request(action, credential ? { cred: credential } : {}).then((answer) => {
      if (answer.status === 'expired_token' || answer.status === 'invalid_token') this._authenticate(this._epoch, true);
    }, () => {});
  }
}
