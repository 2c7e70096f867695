"""Build step: ship the checkout's top-level assets/ and kernels/ inside the package.

Everything else is declared in pyproject.toml. A wheel (and anything built from it: pipx,
a system site-packages) gets them as ``viz/_data/assets`` and ``viz/_data/kernels``, where
``viz.assets.root()`` and ``kernels_dir()`` look first; a checkout or an editable install
keeps using the top-level folders, so no file exists twice in the repository.
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
DATA_DIRS = ("assets", "kernels")  # top-level folder -> viz/_data/<folder>


class build_py_with_data(build_py):
    """build_py that also copies assets/ and kernels/ into viz/_data/ of the build tree."""

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install reads the checkout's folders directly
        for name in DATA_DIRS:
            source = HERE / name
            if source.is_dir():
                self.copy_tree(str(source), str(Path(self.build_lib) / "viz" / "_data" / name))


setup(cmdclass={"build_py": build_py_with_data})
