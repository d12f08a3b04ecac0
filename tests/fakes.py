"""Small stand-ins shared by the unit tests: a clock the test moves by hand, and a link that records
what is published on it (for code that is handed a clock or a ``publish`` callable)."""

from __future__ import annotations


class ManualClock:
    """A monotonic clock that stands still until the test calls :meth:`advance`."""

    def __init__(self, t: float = 100.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t

    def advance(self, dt: float) -> None:
        self.t += dt


class PublishLog:
    """A link's ``publish(topic, payload, **kw)``, recorded: ``on(suffix)`` is what went to the
    topics ending in ``suffix``, as ``(payload, kw)`` pairs."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, object, dict]] = []

    def publish(self, topic, payload, **kw) -> None:
        self.sent.append((topic, payload, kw))

    def on(self, suffix: str) -> list:
        return [(p, kw) for t, p, kw in self.sent if t.endswith(suffix)]
