"""Console logins: sessions kept in the gate's memory, their CSRF tokens, and the one-time link of
`write-gate console`.

A session is named by a random id in an HttpOnly, SameSite=Strict cookie; the agent's token is never kept (only
its hash, so a token given anew or an agent removed from the agents file ends the session at its next request).
A session exists only once a login succeeded: the login form keeps nothing on the server (its CSRF token is a
signed double-submit: a random value in its own cookie, and its HMAC under the process's key in the form), so no
number of anonymous visits can push a logged-in session out of the cap. A login replaces the session it came in
with (a session id is never promoted), and a session unused for the idle time is dropped. The one-time link's
secret works once, and its URL is left at once for one without it.
"""

import hashlib
import hmac
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field

COOKIE = "write_gate_console"
LOGIN_COOKIE = "write_gate_console_login"  # the login form's double-submit value; no server-side state
CSRF_FIELD = "csrf"
CSRF_HEADER = "x-csrf-token"


def _token() -> str:
    return secrets.token_urlsafe(32)


@dataclass
class Session:
    id: str
    csrf: str
    agent: str
    token_sha256: str | None = None  # the token it logged in with; None for the one-time link's operator
    last_seen: float = field(default_factory=time.monotonic)

    def csrf_matches(self, sent: str | None) -> bool:
        return sent is not None and hmac.compare_digest(self.csrf.encode(), sent.encode())


class LoginForms:
    """The login form's CSRF token without a session: `csrf(value)` is the value's HMAC under a key this process
    made, so only a form this console served matches the cookie that came with it."""

    def __init__(self) -> None:
        self._key = secrets.token_bytes(32)

    @staticmethod
    def new_value() -> str:
        return _token()

    def csrf(self, value: str) -> str:
        return hmac.new(self._key, value.encode(), hashlib.sha256).hexdigest()

    def matches(self, value: str | None, sent: str | None) -> bool:
        return bool(value) and sent is not None and hmac.compare_digest(self.csrf(value or "").encode(), sent.encode())


class Sessions:
    MAX = 10_000  # logged-in sessions; beyond this many, the least recently used go first

    def __init__(self, idle_seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._idle = idle_seconds
        self._clock = clock
        self._sessions: dict[str, Session] = {}
        self._once: str | None = None  # the one-time link's secret's hash, until used

    def get(self, session_id: str | None) -> Session | None:
        if session_id is None:
            return None
        session = self._sessions.get(session_id)
        now = self._clock()
        if session is None or now - session.last_seen > self._idle:
            self._sessions.pop(session_id, None)
            return None
        session.last_seen = now
        return session

    def start(self, agent: str, token_sha256: str | None = None) -> Session:
        """A logged-in session: only a login makes one."""
        if len(self._sessions) >= self.MAX:
            oldest = min(self._sessions.values(), key=lambda s: s.last_seen)
            del self._sessions[oldest.id]
        session = Session(_token(), _token(), agent, token_sha256, self._clock())
        self._sessions[session.id] = session
        return session

    def end(self, session_id: str) -> None:
        self._sessions.pop(session_id, None)

    def one_time_link(self) -> str:
        """A new secret for the link printed at start (the last one stops working)."""
        secret = _token()
        self._once = hashlib.sha256(secret.encode()).hexdigest()
        return secret

    def use_once(self, secret: str) -> bool:
        """True the first time the printed secret comes back, never again."""
        if self._once is None:
            return False
        digest = hashlib.sha256(secret.encode()).hexdigest()
        if not hmac.compare_digest(self._once, digest):
            return False
        self._once = None
        return True
