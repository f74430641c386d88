"""Where a learner's code lives: bundled lessons, their editable copies, and autosaves.

Editing a bundled lesson never touches the original: the edit goes to a copy in the
user's data folder, which is what runs from then on, until "Revert to original". The
lessons' helper modules (``lessons/course.py``) are copied beside those copies, so an
edited lesson imports them as the original does, in GradStep and with plain ``python``.
Every file is written whole or not at all (a temporary file in the same folder, synced,
then renamed over the old one), and a recovery copy carries a checksum of its text, so
one that is damaged anyway is never offered. Plain Python, so the rules are tested without Qt.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from pathlib import Path

from app.lesson_format import lesson_order

LESSONS_DIR = Path(__file__).resolve().parent.parent / "lessons"

#: The first line of a recovery copy: a Python comment, so the copy still runs as it is.
_RECOVERY_HEADER = "# GradStep recovery copy, sha256 {digest}\n"
_RECOVERY_LINE = re.compile(r"# GradStep recovery copy, sha256 ([0-9a-f]{64})\n")
#: The first line of GradStep's copy of a helper module; the digest tells whether the learner changed the copy.
_HELPER_HEADER = "# GradStep's copy of lessons/{name}, kept up to date until you change it; sha256 {digest}\n"
_HELPER_LINE = re.compile(r"# GradStep's copy of lessons/[^,\n]*, kept up to date until you change it; "
                          r"sha256 ([0-9a-f]{64})\n")


def write_atomically(target: Path, text: str) -> None:
    """Replace ``target`` with ``text`` (UTF-8) so that a crash leaves either the old file or the new one."""
    target.parent.mkdir(parents=True, exist_ok=True)
    handle = tempfile.NamedTemporaryFile("w", encoding="utf-8", newline="", dir=target.parent,
                                         prefix=f".{target.name}.", suffix=".tmp", delete=False)
    try:
        with handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(handle.name, target)
    except BaseException:
        Path(handle.name).unlink(missing_ok=True)
        raise


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Workspace:
    """Maps files the user opens to the files that are edited and run.

    Parameters
    ----------
    data_dir
        The user's data folder; copies of edited lessons go to ``data_dir/lessons``.
    lessons_dir
        The bundled lessons.
    """

    def __init__(self, data_dir: str | os.PathLike, lessons_dir: str | os.PathLike = LESSONS_DIR) -> None:
        self.data_dir = Path(data_dir)
        self.lessons_dir = Path(lessons_dir).resolve()

    def is_bundled(self, path: str | os.PathLike) -> bool:
        """Whether ``path`` is one of the bundled lessons."""
        return Path(path).resolve().parent == self.lessons_dir

    def copy_path(self, original: str | os.PathLike) -> Path:
        """Where the editable copy of a bundled lesson lives."""
        return self.data_dir / "lessons" / Path(original).name

    def open_path(self, path: str | os.PathLike) -> Path:
        """The file to show for ``path``: a bundled lesson's copy when the learner has edited it.

        When that is a copy, the helper modules beside it are brought up to date first (see
        :meth:`provide_helpers`).
        """
        path = Path(path).resolve()
        shown = self.copy_path(path) if self.is_bundled(path) and self.copy_path(path).is_file() else path
        self._helpers_beside(shown)
        return shown

    def helper_modules(self) -> list[Path]:
        """The bundled lessons' helper modules: the Python files beside them that are not lessons."""
        return sorted(path for path in self.lessons_dir.glob("*.py") if lesson_order(path) is None)

    def provide_helpers(self) -> None:
        """Put a copy of each helper module beside the learner's copies, which import it from there.

        A copy GradStep wrote follows the bundled module (a newer GradStep brings its newer
        helpers); a copy the learner changed, or saved as their own, is theirs and stays.
        """
        for helper in self.helper_modules():
            text = helper.read_text(encoding="utf-8")
            target = self.copy_path(helper)
            try:
                with open(target, encoding="utf-8", newline="") as handle:
                    kept = handle.read()
            except FileNotFoundError:
                kept = None
            except (OSError, UnicodeDecodeError):
                continue  # not readable as GradStep's copy, so not GradStep's to replace
            if kept is not None:
                header = _HELPER_LINE.match(kept)
                body = kept[header.end():] if header else None
                if body is None or header.group(1) != _digest(body) or body == text:
                    continue  # the learner's own, or already current
            write_atomically(target, _HELPER_HEADER.format(name=helper.name, digest=_digest(text)) + text)

    def _helpers_beside(self, path: Path) -> None:
        """Provide the helper modules when ``path`` is in the folder of the learner's copies."""
        if path.resolve().parent != (self.data_dir / "lessons").resolve():
            return
        try:
            self.provide_helpers()
        except OSError:
            pass  # the lesson's own file matters more; a helper that is missing shows as the run's ImportError

    def original_of(self, path: str | os.PathLike) -> Path | None:
        """The bundled lesson a copy was made from, or None when ``path`` is not such a copy."""
        path = Path(path).resolve()
        if path.parent == (self.data_dir / "lessons").resolve():
            original = self.lessons_dir / path.name
            return original if original.is_file() else None
        return None

    def save_target(self, path: str | os.PathLike) -> Path:
        """The file an edit of ``path`` is written to (never a bundled original)."""
        return self.copy_path(path) if self.is_bundled(path) else Path(path)

    def save(self, path: str | os.PathLike, text: str) -> Path:
        """Write the learner's text for ``path``; returns the file written (a copy gets the helper modules)."""
        target = self.save_target(path)
        write_atomically(target, text)
        self._helpers_beside(target)
        return target

    def revert(self, path: str | os.PathLike) -> Path:
        """Drop the learner's copy of a bundled lesson; returns the original."""
        original = self.original_of(path) or Path(path).resolve()
        copy = self.copy_path(original)
        if copy.is_file():
            copy.unlink()
        return original

    # ---- unsaved edits of the user's own files ---------------------------------------------

    def recovery_path(self, path: str | os.PathLike) -> Path:
        """Where unsaved edits of ``path`` are kept until saved or discarded."""
        path = Path(path).resolve()
        digest = hashlib.sha1(str(path).encode()).hexdigest()[:10]
        return self.data_dir / "autosave" / f"{path.stem}-{digest}.py"

    def lock_path(self, path: str | os.PathLike) -> Path:
        """The lock file of the file an edit of ``path`` is written to: one window at a time edits it
        (and autosaves it), so that two windows never overwrite each other's edits."""
        target = self.save_target(path).resolve()
        digest = hashlib.sha1(str(target).encode()).hexdigest()[:10]
        return self.data_dir / "locks" / f"{target.stem}-{digest}.lock"

    def keep_unsaved(self, path: str | os.PathLike, text: str) -> None:
        """Keep unsaved edits of a user's file without touching the file itself."""
        write_atomically(self.recovery_path(path), _RECOVERY_HEADER.format(digest=_digest(text)) + text)

    def unsaved(self, path: str | os.PathLike, saved_text: str) -> str | None:
        """Edits of ``path`` kept from an earlier session that differ from its text, if any.

        A copy that cannot be read whole (truncated, altered, not UTF-8) is dropped, never offered.
        """
        recovery = self.recovery_path(path)
        try:
            with open(recovery, encoding="utf-8", newline="") as handle:
                kept = handle.read()
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError):
            kept = ""
        header = _RECOVERY_LINE.match(kept)
        text = kept[header.end():] if header else None
        if text is None or header.group(1) != _digest(text) or text == saved_text:
            recovery.unlink(missing_ok=True)
            return None
        return text

    def forget_unsaved(self, path: str | os.PathLike) -> None:
        """The edits were saved or discarded: drop their copy."""
        self.recovery_path(path).unlink(missing_ok=True)
