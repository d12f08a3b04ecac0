"""The .deb's parts (systemd/debian/, scripts/build-deb), checked in seconds on any machine.

The package itself is built, installed, run and removed on arm64 by scripts/check-arm64 (a timed
step of .ci/run); these tests keep its parts consistent with each other and with INSTALL.md.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from controller.app.config import load_config
from tests.conftest import REPO

DEBIAN = REPO / "systemd" / "debian"
BUILD = (REPO / "scripts" / "build-deb").read_text()
INSTALL = (REPO / "systemd" / "INSTALL.md").read_text()
ETC = "/etc/poker-table-controller"
LOGINS = ("controller", "console", "display", "overlay", "producer")


def _version() -> str:
    return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]


def test_every_conffile_is_installed_by_build_deb() -> None:
    conffiles = (DEBIAN / "conffiles").read_text().split()
    assert conffiles == [f"{ETC}/table.toml", "/etc/mosquitto/conf.d/poker-table.conf",
                         "/etc/mosquitto/poker-table.acl"]
    for path in conffiles:
        assert f'"$ROOT{path}"' in BUILD.replace("$ROOT/etc/$PKG/", f"$ROOT{ETC}/"), path


def test_the_default_config_passes_check_config(tmp_path: Path) -> None:
    """What postinst leaves in /etc/poker-table-controller, moved under tmp_path: check-config accepts it."""
    etc = tmp_path / "etc"
    etc.mkdir()
    for login in LOGINS:
        (etc / f"{login}.pass").write_text("a-random-password\n")
    text = (DEBIAN / "table.toml").read_text()
    assert f'password_file = "{ETC}/controller.pass"' in text and 'root = "/opt/poker-table-controller/web"' in text
    text = text.replace(ETC, str(etc)).replace("/opt/poker-table-controller/web", str(REPO / "web"))
    (etc / "table.toml").write_text(text)
    config = load_config(etc / "table.toml")
    assert config.mqtt.url == "mqtt://127.0.0.1:1883" and config.mqtt.username == "controller"
    assert config.mqtt.read_password() == "a-random-password"
    assert set(config.web.pages()) == {"display", "overlay", "tracker"}
    assert config.gpio.enabled and config.serial.enabled
    assert str(config.journal.path) == "/var/lib/poker-table-controller/journal.sqlite"  # the unit's StateDirectory
    proc = subprocess.run([sys.executable, "-m", "controller.cli", "check-config", "--config", str(etc / "table.toml")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "ok" in proc.stdout


def test_postinst_makes_every_login_the_config_and_the_acl_name() -> None:
    postinst = (DEBIAN / "postinst").read_text()
    assert "for user in controller console display overlay producer; do" in postinst
    assert 'grep -q "^$user:" "$PASSWD" && continue' in postinst  # an upgrade adds a missing login
    assert "for user in controller console display overlay producer; do" in (DEBIAN / "postrm").read_text()
    acl = (REPO / "systemd" / "mosquitto" / "acl").read_text()
    config = (DEBIAN / "table.toml").read_text()
    for login in LOGINS:
        assert re.search(rf"^user {login}$", acl, re.M), login
    for login in set(re.findall(r'^user(?:name)? = "(\w+)"', config, re.M)):
        assert login in LOGINS
    # The unit's supplementary groups are the ones postinst adds the user to (gpio made if missing).
    unit = (REPO / "systemd" / "poker-table-controller.service").read_text()
    groups = re.search(r"^SupplementaryGroups=(.*)$", unit, re.M).group(1).split()
    assert f"for g in {' '.join(groups)}; do" in postinst
    assert "addgroup --quiet --system gpio" in postinst


def test_removal_never_touches_the_state_folder() -> None:
    for script in ("prerm", "postrm"):
        assert "/var/lib/poker-table-controller" not in re.sub(r"#.*", "", (DEBIAN / script).read_text())


@pytest.mark.parametrize("script", ["postinst", "prerm", "postrm"])
def test_maintainer_scripts_are_posix_sh(script: str) -> None:
    path = DEBIAN / script
    assert path.read_text().startswith("#!/bin/sh\n") and path.stat().st_mode & 0o111
    assert subprocess.run(["sh", "-n", str(path)]).returncode == 0


def test_install_md_installs_what_build_deb_builds() -> None:
    deb = f"poker-table-controller_{_version()}_arm64.deb"
    assert f"sudo apt install ./poker-table-controller/dist/{deb}" in INSTALL
    assert "scripts/build-deb" in INSTALL and "${PKG}_${VERSION}_${ARCH}.deb" in BUILD
    control = (DEBIAN / "control.in").read_text()
    assert re.search(r"^Depends: .*\bmosquitto\b", control, re.M)
    assert "/opt/poker-table-controller/.venv/bin/tablectl run" in (
        REPO / "systemd" / "poker-table-controller.service").read_text()
    assert 'ln -s "$PREFIX/.venv/bin/tablectl" "$ROOT/usr/bin/tablectl"' in BUILD


def test_postinst_adds_only_the_missing_logins_on_an_upgrade(tmp_path: Path) -> None:
    """postinst's login loop, run by sh with stand-ins for mosquitto_passwd, install and the Pi's
    python3.11 (this test's own Python): a fresh
    install makes every login; an upgrade from a package without the producer's login adds it and
    keeps every password already handed out."""
    text = (DEBIAN / "postinst").read_text()
    loop = text[text.index('  [ -e "$PASSWD" ] ||'):text.index("  done\n", text.index("for user in controller")) + 7]
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    (bin_ / "mosquitto_passwd").write_text('#!/bin/sh\nprintf "%s:hashed\\n" "$3" >> "$2"\n')
    (bin_ / "install").write_text('#!/bin/sh\nfor last; do :; done\n: > "$last"\n')
    (bin_ / "python3.11").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')  # the Pi's Python
    for stub in bin_.iterdir():
        stub.chmod(0o755)
    etc = tmp_path / "etc"
    etc.mkdir()
    passwd = tmp_path / "passwd"
    env = {"PATH": f"{bin_}:/usr/bin:/bin", "ETC": str(etc), "PASSWD": str(passwd)}

    def run() -> None:
        proc = subprocess.run(["sh", "-ec", loop], env=env, capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr

    run()  # a fresh install
    assert passwd.read_text().split() == [f"{login}:hashed" for login in LOGINS]
    assert sorted(p.name for p in etc.iterdir()) == sorted(f"{login}.pass" for login in LOGINS)
    # An upgrade from the package before the producer's login: only that one is made.
    passwd.write_text("".join(f"{login}:old\n" for login in LOGINS if login != "producer"))
    for p in etc.iterdir():
        p.write_text("handed-out\n")
    (etc / "producer.pass").unlink()
    run()
    assert passwd.read_text().split() == [f"{login}:old" for login in LOGINS if login != "producer"] + [
        "producer:hashed"]
    assert all((etc / f"{login}.pass").read_text() == "handed-out\n" for login in LOGINS if login != "producer")
    assert len((etc / "producer.pass").read_text().strip()) >= 24
