"""The page tests' fixtures, for every module here: one broker, page server and browser per module and
a table feed per test (defined in tests/web_helpers.py, beside the helpers they use)."""

from tests.web_helpers import web_broker, web_browser, web_feed, web_passwords, web_server  # noqa: F401
