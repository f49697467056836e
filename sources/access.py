"""Who may use what on the HTTP server and the OTLP receivers: three scopes, each with its own bearer token.

- ingest: POST /v1/events and /v1/feedback (but reviews), OTLP spans. http.auth_token; on OTLP,
  otlp.auth_token when set, else http.auth_token. Without a token, open (as it always was).
- api: GET /api/* (bad cases, calibration: users' questions and answers) and GET /report. http.api_token.
- review: feedback of kind `review` (HTTP, or OTLP evaluation scores): reviews steer calibration and the
  corrected rates. http.review_token.

A scope whose token is set needs it on every address. Without its token, a user-data scope (api, review) is
open on a loopback address only; on any other it is refused (403, naming the setting) unless
http.allow_unauthenticated_user_data is true. The server decides by the address it binds, not by the peer's:
behind a proxy every peer may look local. Tokens never cross scopes: the ingest token reads no bad case.
"""

from __future__ import annotations

import hmac
import ipaddress
from dataclasses import dataclass

from ragpulse.config import Config

OPT_OUT = "http.allow_unauthenticated_user_data"


def is_loopback(host: str) -> bool:
    """Whether a listen address reaches this machine only; a host name other than localhost, or "" (every
    address), is taken as reachable from elsewhere."""
    if host == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback


def bearer(header: str) -> str | None:
    """The token of an `Authorization: Bearer <token>` value; the scheme is case-insensitive (RFC 7235)."""
    scheme, _, token = header.strip().partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token else None


@dataclass(frozen=True, slots=True)
class Refusal:
    status: int  # 401: the scope's token is set, and missing or wrong; 403: no token on a non-loopback address
    reason: str  # "unauthorized" or "unprotected": the error in the answer, the reason label of refused events
    message: str
    setting: str  # the option whose token the request needs

    @property
    def headers(self) -> dict[str, str]:
        return {"WWW-Authenticate": "Bearer"} if self.status == 401 else {}

    def body(self) -> dict[str, str]:
        return {"error": self.reason, "message": self.message, "setting": self.setting}


@dataclass(frozen=True, slots=True)
class Scope:
    name: str  # ingest, api or review
    setting: str  # the option of its token
    what: str  # what it guards, for the messages
    token: str | None
    open: bool  # granted without a token
    exposed: bool  # user data without a token on a non-loopback address: refused, or open by the opt-out

    def refusal(self, token: str | None) -> Refusal | None:
        """Why a request with this bearer token (None: none) may not use the scope, or None."""
        if self.token is not None:
            # Constant time: how much of a guess is right must not show in the answer's timing.
            if token is not None and hmac.compare_digest(token.encode(), self.token.encode()):
                return None
            return Refusal(401, "unauthorized", f"{self.what} needs the bearer token of {self.setting} "
                           "(Authorization: Bearer <token>): it is missing or wrong", self.setting)
        if self.open:
            return None
        return Refusal(403, "unprotected", f"{self.what} is user data: without {self.setting} set it is allowed on "
                       f"a loopback address only. Set {self.setting} (or {self.setting}_file) and send it as "
                       f"Authorization: Bearer <token>, or listen on 127.0.0.1, or set {OPT_OUT}: true", self.setting)


@dataclass(frozen=True, slots=True)
class Access:
    """The ingest and review scopes of one listener (the HTTP server, the OTLP receivers)."""

    ingest: Scope
    review: Scope

    def door(self, token: str | None) -> Refusal | None:
        """Before an ingest request's body is read: with an ingest token set, the bearer must be it or the
        review token (a review needs no ingest token); each event's own scope is checked once decoded."""
        refused = self.ingest.refusal(token)
        if refused is None or (self.review.token is not None and self.review.refusal(token) is None):
            return None
        return refused


def _user_data(name: str, setting: str, what: str, token: str | None, host: str, opted_out: bool) -> Scope:
    exposed = token is None and not is_loopback(host)
    return Scope(name, setting, what, token, open=token is None and (not exposed or opted_out), exposed=exposed)


def api_scope(config: Config) -> Scope:
    """GET /api/* and GET /report on the HTTP server."""
    return _user_data("api", "http.api_token", "GET /api/ (bad cases, calibration), GET /report", config.api_token(),
                      config.http.host, config.http.allow_unauthenticated_user_data)


def access(config: Config, listener: str) -> Access:
    """The scopes of the HTTP server (listener "http") or the OTLP receivers ("otlp")."""
    host = config.otlp.host if listener == "otlp" else config.http.host
    token, setting, what = config.auth_token(), "http.auth_token", "ingest (POST /v1/)"
    if listener == "otlp":
        what = "OTLP ingest"
        if (own := config.otlp.token()) is not None:  # the receivers' own token first, else the server's
            token, setting = own, "otlp.auth_token"
    return Access(
        ingest=Scope("ingest", setting, what, token, open=token is None, exposed=False),
        review=_user_data("review", "http.review_token", "review feedback", config.review_token(), host,
                          config.http.allow_unauthenticated_user_data),
    )
