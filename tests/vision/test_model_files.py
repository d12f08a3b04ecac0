"""The shipped model files: each loads, and a missing or broken one is one clear error that names
the ``vision.train`` target that rebuilds it (vision.recognizer.stock_model, index_model)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from controller.errors import PokerTableError
from vision.recognizer import VisionModelError, index_model, stock_model

LOADERS = [(stock_model, "card model", "stock"), (index_model, "index model", "index")]


@pytest.mark.parametrize(("load", "what", "target"), LOADERS)
def test_the_shipped_model_loads(load: Callable[..., Any], what: str, target: str) -> None:
    assert load() is not None


@pytest.mark.parametrize(("load", "what", "target"), LOADERS)
@pytest.mark.parametrize("broken", ["missing", "garbage"])
def test_a_missing_or_broken_model_names_its_rebuild(load: Callable[..., Any], what: str, target: str,
                                                      broken: str, tmp_path: Path) -> None:
    path = tmp_path / "model.npz"
    if broken == "garbage":
        path.write_bytes(b"not a model")
        path.with_suffix(".json").write_text("{not json")
    rebuild = rf"^{what} .* unreadable .*: run python -m vision.train {target}$"
    with pytest.raises(VisionModelError, match=rebuild) as err:
        load(path)
    assert isinstance(err.value, PokerTableError)
