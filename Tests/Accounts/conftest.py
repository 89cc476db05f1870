"""Account-service tests against a real ``hearth serve`` (not emulator mode: an admin token,
no demo, project ``hearth-accounts``), configured by a settings file with a real OpenID
Connect provider (Tests/Support/oidc_server.py, as ``oidc.test``) and a real SMTP submission
server (Tests/Support/smtp_server.py: STARTTLS, AUTH, a certificate Hearth is told to trust).

Fixtures (module scope: each test file gets servers of its own):

- ``smtp``: the SMTP test server (``smtp.wait_for(predicate)``, ``smtp.messages``).
- ``provider``: the OpenID provider, with every account in ``PROVIDER_USERS`` and two
  registered redirect URIs: Hearth's ``/__/auth/handler`` and ``DIRECT_REDIRECT``.
- ``hearth``: the server (``accounts_support.Hearth``). Its port is chosen before the provider
  starts, so the provider's redirect URI and the settings file's ``publicURL`` can name it.
  Its rules let a signed-in user read and write ``users/<own uid>``.

Environment: ``HEARTH_BINARY`` (default ``/work/main/.build/debug/hearth``).
"""

from __future__ import annotations

import pytest

from accounts_support import (
    CLIENT_ID, CLIENT_SECRET, DIRECT_REDIRECT, OWN_DATA_RULES, PROVIDER_USERS, SMTP_PASSWORD, SMTP_USERNAME,
    OIDCProvider, free_port, launch_hearth, oidc_providers, settings_for, stop_hearth,
)
from smtp_server import SMTPTestServer


@pytest.fixture(scope="module")
def smtp():
    with SMTPTestServer(SMTP_USERNAME, SMTP_PASSWORD) as server:
        yield server


@pytest.fixture(scope="module")
def hearth_port():
    return free_port()


@pytest.fixture(scope="module")
def provider(hearth_port):
    redirect_uris = [f"http://127.0.0.1:{hearth_port}/__/auth/handler", DIRECT_REDIRECT]
    with OIDCProvider(CLIENT_ID, CLIENT_SECRET, redirect_uris, PROVIDER_USERS.values()) as started:
        yield started


@pytest.fixture(scope="module")
def hearth(hearth_port, provider, smtp):
    server = launch_hearth(
        settings_for(hearth_port, smtp=smtp, providers=oidc_providers(provider.issuer)), port=hearth_port,
        rules=OWN_DATA_RULES)
    yield server
    stop_hearth(server)
