"""`hearth serve --settings FILE` refuses a settings file it cannot use: the process exits
with a non-zero status before serving, with a message that names the setting at fault.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from accounts_support import ADMIN_TOKEN, PROJECT, wait_for_binary

GOOD_PROVIDER = {"id": "oidc.corp", "displayName": "Corp", "issuer": "https://sso.example.com", "clientId": "hearth",
                 "clientSecret": "s3cret"}
GOOD_SMTP = {"host": "127.0.0.1", "port": 2525, "security": "starttls", "username": "u", "password": "p"}


def without(entry: dict, key: str) -> dict:
    return {name: value for name, value in entry.items() if name != key}


CASES = {
    "unknown provider id": (
        {"auth": {"providers": [dict(GOOD_PROVIDER, id="corp.sso")]}}, ["auth.providers", "corp.sso"]),
    "built-in-looking provider id Hearth does not know": (
        {"auth": {"providers": [dict(GOOD_PROVIDER, id="facebook.com")]}}, ["auth.providers", "facebook.com"]),
    "provider without clientId": (
        {"auth": {"providers": [GOOD_PROVIDER, without(dict(GOOD_PROVIDER, id="oidc.two"), "clientId")]}},
        ["auth.providers[1].clientId", "missing"]),
    "provider without id": ({"auth": {"providers": [without(GOOD_PROVIDER, "id")]}}, ["auth.providers[0].id", "missing"]),
    "OIDC provider without issuer": (
        {"auth": {"providers": [without(GOOD_PROVIDER, "issuer")]}}, ["auth.providers", "oidc.corp", "MISSING_ISSUER"]),
    "OIDC provider with a bad issuer": (
        {"auth": {"providers": [dict(GOOD_PROVIDER, issuer="sso.example.com")]}}, ["auth.providers", "oidc.corp", "issuer"]),
    "OIDC provider without client secret": (
        {"auth": {"providers": [without(GOOD_PROVIDER, "clientSecret")]}},
        ["auth.providers", "oidc.corp", "MISSING_OAUTH_CLIENT_SECRET"]),
    "publicURL of another scheme": ({"publicURL": "ftp://accounts.example.com"}, ["publicURL"]),
    "publicURL that is not a URL": ({"publicURL": "not a url"}, ["publicURL"]),
    "publicURL without a host": ({"publicURL": "https://"}, ["publicURL"]),
    "publicURL that is not a string": ({"publicURL": 42}, ["publicURL"]),
    "SMTP security unknown": (
        {"auth": {"email": {"smtp": dict(GOOD_SMTP, security="ssl")}}}, ["auth.email.smtp.security"]),
    "SMTP port out of range": ({"auth": {"email": {"smtp": dict(GOOD_SMTP, port=70000)}}}, ["auth.email.smtp.port"]),
    "SMTP without host": ({"auth": {"email": {"smtp": without(GOOD_SMTP, "host")}}}, ["auth.email.smtp.host", "missing"]),
    "a misspelt setting": (
        {"auth": {"providers": [dict(GOOD_PROVIDER, githubUrl="https://git.example.com")]}},
        ["auth.providers[0].githubUrl is not a setting"]),
    "a misspelt top-level setting": ({"publicUrl": "https://app.example.com"}, ["publicUrl is not a setting"]),
    "a misspelt social setting": ({"social": {"retention": {"postdays": 30}}}, ["social.retention.postdays is not a setting"]),
    "post retention of no days": ({"social": {"retention": {"postDays": 0}}}, ["social.retention.postDays", "at least 1"]),
    "a push subject that is not a mailto: or https: URI": (
        {"social": {"push": {"subject": "ops@example.com"}}}, ["social.push.subject"]),
    "account retention of no days": (
        {"social": {"retention": {"inactiveAccountDays": -3}}}, ["social.retention.inactiveAccountDays", "at least 1"]),
    "a retention schedule that is not one": (
        {"social": {"retention": {"postDays": 30, "schedule": "now and then"}}}, ["social.retention.schedule"]),
    "githubURL on another provider": (
        {"auth": {"providers": [dict(GOOD_PROVIDER, githubURL="https://git.example.com")]}}, ["oidc.corp", "githubURL"]),
    "SMTP password file missing": (
        {"auth": {"email": {"smtp": dict(without(GOOD_SMTP, "password"), passwordFile="no-such-file")}}},
        ["auth.email.smtp.password", "no-such-file"]),
}


def run_serve(settings_path: Path, folder: Path) -> tuple[int, str]:
    """Runs ``hearth serve`` with the settings; returns its exit status and output. A server
    that starts anyway is stopped, and the test fails."""
    command = [
        wait_for_binary(), "serve", "--port", "0", "--data", str(folder / "data"), "--admin-token", ADMIN_TOKEN,
        "--no-demo", "--project", PROJECT, "--settings", str(settings_path),
    ]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        output, _ = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        output, _ = process.communicate()
        pytest.fail("hearth serve kept running with these settings:\n" + output)
    return process.returncode, output


@pytest.fixture
def folder():
    path = Path(tempfile.mkdtemp(prefix="hearth-settings-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.mark.parametrize("case", list(CASES))
def test_bad_settings_stop_the_server_naming_the_setting(case, folder):
    settings, fragments = CASES[case]
    path = folder / "settings.json"
    path.write_text(json.dumps(settings))
    status, output = run_serve(path, folder)
    assert status != 0, output
    assert "Hearth is serving" not in output
    for fragment in fragments:
        assert fragment in output, f"{fragment!r} not in:\n{output}"


def test_an_email_template_that_does_not_parse_is_named(folder):
    templates = folder / "templates"
    templates.mkdir()
    (templates / "password-reset.subject.mustache").write_text("Reset {{#appName}} never closed")
    path = folder / "settings.json"
    path.write_text(json.dumps({"auth": {"email": {"smtp": GOOD_SMTP, "templates": "templates"}}}))
    status, output = run_serve(path, folder)
    assert status != 0, output
    assert "auth.email.templates" in output and "password-reset.subject.mustache" in output, output


def test_a_settings_file_that_is_not_json_or_not_there(folder):
    path = folder / "settings.json"
    path.write_text('{"publicURL": "https://example.com",')
    status, output = run_serve(path, folder)
    assert status != 0 and str(path) in output, output

    missing = folder / "missing.json"
    status, output = run_serve(missing, folder)
    assert status != 0 and str(missing) in output, output
