"""The camera's recogniser in a process of its own, so recognising a frame never holds the
daemon's interpreter.

Recognition is seconds of CPU a minute with the camera on, much of it Python holding the GIL.  In a
thread of the daemon it made the daemon's own threads (the antenna link, the engine, the
publisher) wait for it: at a shuffler's pace 2-3 cards in 16 reached the display ~0.3 s late.
Here the camera thread of the daemon (:class:`vision.source.CameraSource`) grabs a frame, decides
whether the table changed (a thumbnail's difference) and hands a changed frame to this process;
it waits for the cards on a pipe, which holds no lock and no GIL.  The daemon's loop never waits
for a frame.

The protocol is pickles on the child's standard input and output (a subprocess, not
``multiprocessing``: the daemon may itself be a daemonic process, which may not have children of
that kind): first the layout, the label folder and whether both readers must agree, answered
by ``("ready", examples)``; then each frame, answered by ``("cards", found)`` or
``("error", text)``; ``None`` or end of input ends it.  When the daemon dies the pipe closes and
this process ends with it.
"""

from __future__ import annotations

import logging
import pickle
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Any, BinaryIO

from controller.errors import PokerTableError
from controller.processes import stop_process

log = logging.getLogger(__name__)


class RecognitionWorkerError(PokerTableError):
    """The recogniser's process failed to start or died."""


class RecognitionWorker:
    """The client side, used by the camera's thread: :meth:`scan` as :meth:`Recognizer.scan` does
    (``keep_crops=False``), in the worker process."""

    def __init__(self, layout: Any, label_dir: Path | None, start_timeout: float = 120.0,
                 two_readers: bool = False) -> None:
        self._proc = subprocess.Popen([sys.executable, "-m", "vision.recognition_worker"],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self._lock = threading.Lock()
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._out: IO[bytes] = self._proc.stdin
        self._in: IO[bytes] = self._proc.stdout
        self.examples = 0
        timer = threading.Timer(start_timeout, self._proc.kill)  # a worker that never answers is ended
        timer.start()
        try:
            kind, value = self._call((layout, None if label_dir is None else str(label_dir), two_readers))
        finally:
            timer.cancel()
        if kind != "ready":
            self.close()
            raise RecognitionWorkerError(f"the camera's recogniser did not start: {value}")
        self.examples = int(value)

    @property
    def pid(self) -> int:
        return self._proc.pid

    def _call(self, message: Any) -> tuple[str, Any]:
        with self._lock:
            try:
                pickle.dump(message, self._out, protocol=pickle.HIGHEST_PROTOCOL)
                self._out.flush()
                return pickle.load(self._in)
            except (OSError, ValueError, EOFError, pickle.UnpicklingError) as exc:  # ValueError: closed
                raise RecognitionWorkerError(f"the camera's recogniser process ended ({exc!r}, "
                                             f"exit {self._proc.poll()})") from exc

    def scan(self, frame: Any) -> Any:
        kind, value = self._call(frame)
        if kind != "cards":
            raise RecognitionWorkerError(f"the camera's recogniser failed on a frame: {value}")
        return value

    def close(self) -> None:
        locked = self._lock.acquire(timeout=2)  # not in the middle of a frame being written
        try:
            pickle.dump(None, self._out)
            self._out.close()
        except (OSError, ValueError):
            pass
        finally:
            if locked:
                self._lock.release()
        stop_process(self._proc, 5, sig=None)  # the None above asked it to end
        self._in.close()


def main(stdin: BinaryIO, stdout: BinaryIO) -> int:
    def answer(kind: str, value: Any) -> None:
        pickle.dump((kind, value), stdout, protocol=pickle.HIGHEST_PROTOCOL)
        stdout.flush()

    try:
        layout, label_dir, two_readers = pickle.load(stdin)
        from vision.labels import LabelStore
        from vision.recognizer import Recognizer

        recognizer = Recognizer.two_reader() if two_readers else Recognizer.stock()
        examples = 0
        if label_dir is not None:
            labels = LabelStore(Path(label_dir))  # the deck in play, as `tablectl calibrate-camera` stored it
            if len(labels):
                examples = recognizer.refine(labels.items())
    except EOFError:
        return 0
    except Exception as exc:  # noqa: BLE001  # told to the daemon, which logs it and stops the camera
        answer("error", repr(exc))
        return 1
    answer("ready", examples)
    while True:
        try:
            frame = pickle.load(stdin)
        except EOFError:
            return 0
        if frame is None:
            return 0
        try:
            answer("cards", recognizer.scan(frame, layout, keep_crops=False))
        except Exception as exc:  # noqa: BLE001  # one bad frame: told, and the next one is read
            answer("error", repr(exc))


if __name__ == "__main__":
    # The protocol owns standard output: the recogniser's prints, if any, go to standard error.
    out = sys.stdout.buffer
    sys.stdout = sys.stderr
    sys.exit(main(sys.stdin.buffer, out))
